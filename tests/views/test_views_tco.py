"""Golden output of ``planner.views.tco``: rent against buy at a given rental price."""

from __future__ import annotations

from decimal import Decimal

from planner import catalog
from planner.answers.tco import tco
from planner.views.tco import render_tco
from tests.helpers.views import TODAY


def test_tco_at_a_given_rental_price_renders_as_before():
    result = tco(
        catalog.get_model("RTX4090-24GB"),
        Decimal("1.9"),
        3000,
        gpus=2,
        pue=Decimal("1.3"),
        rent_note="--rent-price",
        origins={"pue": "--pue"},
        today=TODAY,
    )
    assert render_tco(result, None) == TCO


# What the views printed before they moved out of planner/commands/, byte for byte.
TCO = """\
Rent or buy 2 x RTX4090-24GB: 3,000 busy hours per GPU over 3 years (11% utilisation)

                                    buy       rent
----------------------------  ---------  ---------
total CNY                     45,345.49  11,400.00
CNY per GPU-hour for 3,000 h       7.56       1.90

Buying:     purchase 35,600 + host 10,000 + hosting 3,000 + power 7,453 - resale 10,707 = 45,345 CNY
Renting:    1.90 CNY per GPU-hour (--rent-price)
Break-even: 14,236 busy hours per GPU (54% utilisation), renting at 1.90 CNY per GPU-hour

Recommendation: rent: buying costs 7.56 CNY per used GPU-hour against 1.90 renting; break-even at 14,236 busy hours per GPU (54% utilisation)

Assumptions (flags or [tco] in config.toml change them):
                         value                           source
-----------------------  ------------------------------  ------------------------------------------------------------------------------------------
purchase price per GPU   17,800 CNY                      catalog, 2026-08-13 (observed, medium confidence): CNY: 17800, a used MSI card on Xianyu …
VAT                      included, not reclaimed         prices as quoted in China
host share per GPU       5,000 CNY                       assumption: a 4-GPU workstation host ~20k CNY
hosting and maintenance  500 CNY per GPU-year            assumption (no source found)
electricity              0.64 CNY/kWh                    Statista Mar 2024 (US$0.09/kWh) and China Briefing 2024 (US$0.088/kWh) at 7.10 CNY/USD
PUE                      1.3                             --pue
GPU power                450 W TDP busy, 20% of it idle  assumption (no source found)
host power               +30% of GPU power               assumption (no source found)
resale at the end        30% of the purchase price       0.67 of the value kept per year, assumption (no source found)
horizon                  3 years, 2 GPU(s)               default
rental price             1.9000 CNY per GPU-hour         --rent-price"""
