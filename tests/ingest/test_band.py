"""Nothing is too cheap to be true: one plausibility band per GPU model (``planner.ingest.band``) for
every source. The issue's cases (an integer read at the wrong precision, an hourly 0.0004, a monthly of
1, an imported A100 monthly at 0.01, 24 H100s for CNY 82.78) are refused with the reason; every
legitimate price we hold (the bundled snapshot, every recorded provider answer, marketplace spot prices
included) passes."""

from __future__ import annotations

import csv
import json
from dataclasses import replace
from decimal import Decimal

import pytest
from sqlalchemy import func, select

from db.schema import instances, prices
from planner import catalog
from planner.config import load_config
from planner.ingest.band import HBM_FLOOR, OTHER_FLOOR, floor_of
from planner.ingest.importer import ImportFileError, import_csv
from planner.ingest.normalize import normalize_offers
from planner.ingest.snapshot import snapshot_info, snapshot_path
from scrapers.base import RawOffer
from tests.conftest import price_row, write_csv
from tests.helpers.replay import RAW, outcome, recordings, refresh, replay_copy
from vocab import IMPORT_REQUIRED_COLUMNS

FX = load_config(env={}).section("fx")

H100 = RawOffer(
    provider="compshare",
    region="cn-wlcb",
    instance_type="H100 x8",
    gpu_name="H100",
    gpu_count=8.0,
    billing="on_demand",
    price=Decimal("76"),  # 9.5 per GPU-hour: the lowest H100 price of the recorded answers
    unit="hour",
    gpu_memory_gb=80.0,
)


def _count(engine, table) -> int:
    with engine.connect() as conn:
        return conn.execute(select(func.count()).select_from(table)).scalar_one()


# --- the band's figures ---------------------------------------------------------------------------


def test_each_model_has_a_floor_from_its_class_and_purchase_price():
    assert floor_of("RTX4090-24GB")[0] == Decimal("0.10")  # 17,800 CNY / 175,200 h = 0.10
    assert floor_of("RTX3090-24GB")[0] == OTHER_FLOOR  # 11,999 / 175,200 = 0.07: the class floor wins
    assert floor_of("RTX5090-32GB")[0] == Decimal("0.24")  # 42,500 / 175,200
    assert floor_of("T4-16GB")[0] == OTHER_FLOOR
    assert floor_of("A100-40GB")[0] == HBM_FLOOR
    assert floor_of("V100-32GB")[0] == HBM_FLOOR
    assert floor_of("H20-96GB")[0] == Decimal("0.78")  # 136,250 / 175,200
    assert floor_of("H100-80GB") == (Decimal("1.93"), "its purchase price 337,500 CNY over twenty years")
    for model in catalog.all_models():  # every model has one
        assert floor_of(model.name)[0] >= OTHER_FLOOR


# --- every legitimate price passes ----------------------------------------------------------------


def test_every_row_of_the_bundled_snapshot_is_above_its_floor(engine):
    with snapshot_path().open(encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    result = import_csv(engine, snapshot_path(), FX, kind="snapshot", extra_columns=("gpu_note",))
    assert result.rows == len(rows) == snapshot_info().rows
    with engine.connect() as conn:
        lowest = dict(
            conn.execute(
                select(instances.c.gpu_model, func.min(prices.c.cny_per_gpu_hour))
                .join(prices, prices.c.instance_id == instances.c.id)
                .group_by(instances.c.gpu_model)
            ).all()
        )
    # at least twice the floor: the band leaves room under the cheapest legitimate price of each model
    assert {m: p for m, p in lowest.items() if Decimal(str(p)) < 2 * floor_of(m)[0]} == {}


def test_every_recorded_provider_answer_passes_spot_prices_included(engine, tmp_path):
    summary = refresh(engine, tmp_path, from_raw=RAW)
    for o in summary.outcomes:
        assert not [n for n in o.notes if "too cheap" in n], (o.provider, o.notes)
    with engine.connect() as conn:
        spot = conn.execute(
            select(func.min(prices.c.cny_per_gpu_hour)).where(prices.c.billing == "spot")
        ).scalar_one()
    assert spot is not None and Decimal(str(spot)) == Decimal("0.6")  # PPIO's RTX 5090 spot, stored


# --- what is too cheap to be true is refused, with the reason --------------------------------------


@pytest.mark.parametrize(
    "change, shown",
    [
        # an integer price read at the wrong precision: 76 yuan an hour read as 76 厘
        ({"price": Decimal("0.076")}, "0.0095 CNY per GPU-hour, below the 1.93 floor of H100-80GB"),
        ({"price": Decimal("0.0004"), "gpu_count": 1.0, "instance_type": "H100 x1"}, "0.0004 CNY"),
        ({"price": Decimal("1"), "billing": "monthly", "unit": "month"}, "below the 1.93 floor"),
        # the plan that came out as "24 x H100 ... CNY 82.78": 82.78 for 24 GPUs over a day of hours
        ({"price": Decimal("82.78") / 24 / 24 * 8}, "below the 1.93 floor of H100-80GB"),
    ],
)
def test_a_scraped_price_under_the_band_is_refused_and_named(change, shown):
    result = normalize_offers([replace(H100, **change)], FX)
    assert result.offers == ()
    (line,) = result.rejected
    assert line.startswith("H100 x") and shown in line and "too cheap to be true" in line, line


def test_a_tier_under_the_band_is_refused_too():
    offer = replace(H100, price=Decimal("16"), gpu_count=1.0, tiers=((96, Decimal("1.6")),))
    (line,) = normalize_offers([offer], FX).rejected
    assert "1.6 CNY per GPU-hour, below the 1.93 floor" in line


def test_an_imported_a100_monthly_at_a_cent_is_refused_naming_its_line(engine, tmp_path):
    rows = [
        price_row(gpu_model="A100-80GB"),
        price_row(instance_type="GT4.41XLARGE948", gpu_model="A100-80GB", billing="monthly", price="0.01"),
    ]
    with pytest.raises(ImportFileError) as err:
        import_csv(engine, write_csv(tmp_path / "cheap.csv", rows), FX)
    assert "line 3: price 0.01 per month is 0.0000136986 CNY per GPU-hour" in err.value.message
    assert "below the 0.82 floor of A100-80GB" in err.value.message
    assert _count(engine, prices) == 0


def test_a_refresh_names_the_price_it_refused_in_its_summary(engine, tmp_path):
    folder = replay_copy(tmp_path)
    (page,) = [p for p in recordings(folder, "autodl", "machine/search") if b"RTX 4090" in p.read_bytes()][:1]
    doc = json.loads(page.read_text(encoding="utf-8"))
    for machine in doc["data"]["list"]:
        if machine["gpu_name"] == "RTX 4090":  # 1.88 yuan sent as 1880 厘, here as 1.88 厘
            machine["payg_price"] = 2
            for sku in machine.get("machine_sku_info") or []:
                sku["current_price"] = 2
    page.write_text(json.dumps(doc), encoding="utf-8")
    summary = refresh(engine, tmp_path, from_raw=folder)
    notes = " ".join(outcome(summary, "autodl").notes)
    assert "price(s) refused" in notes and "RTX 4090" in notes and "too cheap to be true" in notes
    with engine.connect() as conn:
        cheapest = conn.execute(select(func.min(prices.c.cny_per_gpu_hour))).scalar_one()
    assert Decimal(str(cheapest)) >= Decimal("0.6")


def test_an_imported_median_under_the_band_is_refused_too(engine, tmp_path):
    columns = [*IMPORT_REQUIRED_COLUMNS, "median_price"]
    row = price_row(provider="autodl", region="west-B", instance_type="RTX 4090", gpu_model="RTX4090-24GB")
    rows = [dict(row, price="1.88", median_price="0.002")]
    with pytest.raises(ImportFileError) as err:
        import_csv(engine, write_csv(tmp_path / "median.csv", rows, columns), FX)
    assert (
        "line 2: median_price 0.002 per hour is 0.002 CNY per GPU-hour, below the 0.10 floor"
        in err.value.message
    )
