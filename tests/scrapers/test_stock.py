"""Each provider's stock words mapped to ours (beside its parser), unknown words never an error."""

from __future__ import annotations

from decimal import Decimal

import pytest

from planner.config import load_config
from planner.ingest.normalize import normalize_offers
from scrapers.base import RawOffer
from scrapers.providers.aliyun_api import aliyun_stock
from scrapers.providers.autodl import autodl_stock
from scrapers.providers.compshare import CompshareScraper, GpuType, parse_inventory
from scrapers.providers.tencent_parse import tencent_stock
from scrapers.stock import STOCK_STATES, best_of, from_count, known_count


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


# --- a negative idle count is no count: unknown, never sold out -------------------------------------


@pytest.mark.parametrize("count", [-1, -40, 1.5, True, "3", None, 10**9])
def test_a_count_that_is_not_one_is_unknown_never_sold_out(count):
    assert from_count(count) == "unknown"
    assert known_count(count) is None


def test_zero_is_sold_out_and_a_positive_count_available():
    assert (from_count(0), from_count(3)) == ("sold_out", "available")


def test_compshare_keeps_a_negative_inventory_count_as_unknown_not_none_free():
    inventory = parse_inventory({"GpuInventoryByZone": {"Exclusive": {"10027": {"4090": -3, "3090": 2}}}})
    assert inventory == {"Exclusive": {"10027": {"4090": None, "3090": 2}}}
    gpu = GpuType("4090", 24.0, "Normal", ((1, 16, 64),))
    (offer,) = CompshareScraper()._offers(
        "cn-wlcb", "cn-wlcb-01", "10027", gpu, 1, 16, 64, {"Dynamic": Decimal("1.69")}, inventory
    )
    # the type's status word (Normal) decides: the -3 says nothing, so it is not sold out
    assert (offer.stock_status, offer.idle_gpus) == ("available", None)
    # a type the inventory leaves out has none free, as before
    absent = GpuType("5090", 32.0, "Normal", ((1, 16, 64),))
    (gone,) = CompshareScraper()._offers(
        "cn-wlcb", "cn-wlcb-01", "10027", absent, 1, 16, 64, {"Dynamic": Decimal("2.69")}, inventory
    )
    assert (gone.stock_status, gone.idle_gpus) == ("sold_out", 0)


def test_a_negative_idle_count_through_the_pipeline_is_stored_as_unknown():
    raw = RawOffer(
        provider="autodl",
        region="west-B",
        instance_type="RTX 4090",
        gpu_name="RTX 4090",
        gpu_count=1.0,
        billing="on_demand",
        price=Decimal("1.88"),
        unit="hour",
        per="gpu",
        gpu_memory_gb=24.0,
        stock_status=autodl_stock(None, -2),
        idle_gpus=-2,
    )
    (offer,) = normalize_offers([raw], load_config(env={}).section("fx")).offers
    assert (offer.stock_status, offer.idle_gpus) == (None, None)


def test_an_import_refuses_a_negative_idle_count_naming_its_line(engine, tmp_path):
    from planner.ingest.importer import ImportFileError, import_csv
    from tests.conftest import price_row, write_csv
    from vocab import IMPORT_REQUIRED_COLUMNS

    columns = [*IMPORT_REQUIRED_COLUMNS, "stock_status", "idle_gpus"]
    path = write_csv(tmp_path / "stock.csv", [price_row(idle_gpus="-1")], columns)
    with pytest.raises(ImportFileError) as err:
        import_csv(engine, path, load_config(env={}).section("fx"))
    assert "line 2: idle_gpus '-1' is negative" in err.value.message
