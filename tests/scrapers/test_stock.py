"""Each provider's stock words mapped to ours (beside its parser), unknown words never an error."""

from __future__ import annotations

import pytest

from scrapers.providers.aliyun_api import aliyun_stock
from scrapers.providers.autodl import autodl_stock
from scrapers.providers.tencent_parse import tencent_stock
from scrapers.stock import STOCK_STATES, best_of


@pytest.mark.parametrize(
    ("status", "category", "ours"),
    [
        ("SELL", "EnoughStock", "available"),
        ("SELL", "NormalStock", "available"),
        ("SELL", "UnderStock", "low"),
        ("SELL", "WithoutStock", "sold_out"),
        ("SOLD_OUT", "EnoughStock", "sold_out"),
        ("SELL", None, "available"),
        (None, "UnderStock", "low"),
        (None, None, "unknown"),
        ("SELL", "SomethingNew", "available"),
        ("ON_SALE_SOON", 3, "unknown"),
    ],
)
def test_tencent(status, category, ours):
    assert tencent_stock(status, category) == ours


@pytest.mark.parametrize(
    ("status", "category", "ours"),
    [
        ("Available", "WithStock", "available"),
        ("Available", "ClosedWithStock", "available"),
        ("Available", "WithoutStock", "sold_out"),
        ("Available", "ClosedWithoutStock", "sold_out"),
        ("SoldOut", "WithStock", "sold_out"),
        ("Available", None, "available"),
        (None, "WithoutStock", "sold_out"),
        (None, None, "unknown"),
        ("Paused", "Whatever", "unknown"),
    ],
)
def test_aliyun(status, category, ours):
    assert aliyun_stock(status, category) == ours


@pytest.mark.parametrize(
    ("orderable", "idle", "ours"),
    [
        (0, 3, "sold_out"),
        (2, 3, "available"),
        (None, 3, "available"),
        (None, 0, "sold_out"),
        (None, None, "unknown"),
    ],
)
def test_autodl(orderable, idle, ours):
    assert autodl_stock(orderable, idle) == ours


def test_best_zone_decides_and_every_state_is_ours():
    assert best_of(["sold_out", "low", "unknown"]) == "low"
    assert best_of(["sold_out", "available"]) == "available"
    assert best_of(["unknown"]) == best_of([]) == "unknown"
    assert set(STOCK_STATES) == {"available", "low", "sold_out", "unknown"}
