"""Golden output of ``planner.views.gpus``: the catalog table, and the value ranking on stored prices."""

from __future__ import annotations

from planner import catalog
from planner.answers.value import check_options, value_ranking
from planner.pricing.query import OfferQuery, models
from planner.views.gpus import render_catalog, render_value
from tests.helpers.views import FX, freeze_today, store_prices


def test_the_catalog_renders_as_before():
    assert (
        render_catalog([catalog.get_model(n) for n in ("A100-80GB", "RTX4090-24GB", "H20-96GB")])
        == GPUS_CATALOG
    )


def test_a_catalog_without_gpus_on_application_has_no_note():
    text = render_catalog([catalog.get_model("T4-16GB")])
    assert text.splitlines()[2].endswith("-") and "'on application'" not in text


def test_the_value_ranking_renders_as_before(engine, tmp_path, monkeypatch):
    freeze_today(monkeypatch)
    store_prices(engine, tmp_path)
    chosen, left_out = models(OfferQuery.build(["A100"], include_variants=True), include_variants=False)
    sort, query = check_options("tflops")
    with engine.connect() as conn:
        result = value_ranking(conn, chosen, FX, query, sort=sort, left_out=left_out)
    assert render_value(result) == GPUS_VALUE


# What the views printed before they moved out of planner/commands/, byte for byte.
GPUS_CATALOG = """\
name          family   variant of  mem GB  TFLOPS  GB/s  TDP W  link             price CNY  price date  on application
------------  -------  ----------  ------  ------  ----  -----  ---------------  ---------  ----------  -------------------
A100-80GB     A100                     80     312  2039    400  NVLink 600 GB/s    143,750  2026-08-21  -
RTX4090-24GB  RTX4090                  24   165.2  1008    450  PCIe only           17,800  2026-08-13  -
H20-96GB      H20                      96     148  4000    400  NVLink 900 GB/s    136,250  2026-08-22  tencent, volcengine
'on application': providers renting the GPU only after a ticket, whitelist or invitation, with no public price (`planner quote --gpu NAME` gives their words)."""


GPUS_VALUE = """\
GPU value: ranked by dense TFLOPS per CNY-hour (rental: cheapest on_demand price per GPU)
Prices observed 2026-11-20 to 2026-11-25.
#  GPU        TFLOPS  GB  CNY/GPU-h (list, on_demand)  where (cheapest)                          TFLOPS per CNY-h  GB per CNY-h  age
-  ---------  ------  --  ---------------------------  ----------------------------------------  ----------------  ------------  ----
1  A100-40GB     312  40                        28.64  tencent GT4.4XLARGE96 on_demand                      10.89          1.40  11 d
2  A100-80GB     312  80                        30.00  aliyun ecs.gn7e-c16g1.32xlarge on_demand             10.40          2.67  6 d

TFLOPS: dense BF16 peak (FP16 where the GPU has no BF16), no sparsity, from the catalog.
CNY/GPU-h (list, on_demand): the cheapest latest list price per GPU over every provider, region and instance (multi-GPU instances divided by their GPUs; vGPU slices left out; spot only with --billing spot).
Offers that could not be rented at their provider's last refresh (sold out, short of idle GPUs, not orderable) are passed over; most providers state no stock, and those offers count as available."""
