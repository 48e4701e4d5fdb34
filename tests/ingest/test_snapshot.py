"""The bundled snapshot: sourced, dated, reproducible from shared/data, and loaded only when needed."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from planner.config import load_config
from planner.ingest.snapshot import ensure_prices, snapshot_info, snapshot_path

SHARED_DATA = Path(__file__).resolve().parents[3] / "shared" / "data"


def rows() -> list[dict[str, str]]:
    with snapshot_path().open(encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh))


def test_every_snapshot_price_has_a_source_and_a_date():
    data = rows()
    assert len(data) > 100
    assert all(r["source"].strip() and r["observed_at"] for r in data)
    assert {r["provider"] for r in data} == {"aliyun", "tencent", "volcengine", "autodl"}
    inferred = [r for r in data if r["gpu_note"]]
    assert inferred and all("inferred" in r["gpu_note"] or "assumed" in r["gpu_note"] for r in inferred)
    info = snapshot_info()
    assert info.newest.isoformat() == max(r["observed_at"] for r in data)


@pytest.mark.skipif(not SHARED_DATA.is_dir(), reason="shared/data is not beside the project")
def test_snapshot_is_reproducible_from_shared_data(tmp_path):
    from planner.ingest import snapshot_build

    out = tmp_path / "snapshot.csv"
    snapshot_build.write(snapshot_build.build(SHARED_DATA), out)
    assert out.read_text(encoding="utf-8") == snapshot_path().read_text(encoding="utf-8")


def test_snapshot_loads_once_into_an_empty_database(engine):
    config = load_config(env={})
    info = ensure_prices(engine, config)
    assert info is not None and info.rows == len(rows())
    assert ensure_prices(engine, config) is None  # not twice


def test_snapshot_auto_load_can_be_switched_off(engine, tmp_path):
    path = tmp_path / "c.toml"
    path.write_text("[snapshot]\nauto_load = false\n")
    assert ensure_prices(engine, load_config(config_file=path, env={})) is None


def test_snapshot_has_2026_prices_of_each_providers_main_gpus():
    recent: dict[str, set[str]] = {}
    for r in rows():
        if r["observed_at"] >= "2025-01-01":
            recent.setdefault(r["provider"], set()).add(r["gpu_model"])
    autodl = {"RTX4090-24GB", "RTX4090D-24GB", "RTX3090-24GB", "RTX5090-32GB", "A100-40GB", "A100-80GB"}
    autodl |= {"A800-80GB", "H800-80GB", "H20-96GB", "L20-48GB"}
    assert autodl <= recent["autodl"]
    assert {"A10-24GB", "T4-16GB", "L20-48GB", "A100-80GB"} <= recent["aliyun"]
    assert {"T4-16GB", "A10-24GB", "V100-32GB", "A100-40GB"} <= recent["tencent"]
    modes = {(r["provider"], r["billing"]) for r in rows() if r["observed_at"] >= "2025-01-01"}
    assert {("aliyun", "monthly"), ("aliyun", "on_demand"), ("autodl", "spot")} <= modes


def test_a_year_only_date_is_said_loudly_and_confidence_stays_in_the_source():
    data = rows()
    year_only = [r for r in data if r["observed_at"] == "2024-01-01"]
    assert {r["provider"] for r in year_only} == {"autodl", "tencent", "volcengine"}
    assert all(r["source"].startswith("DATE UNKNOWN (only '~2024' known") for r in year_only)
    from_points = [r for r in data if "price CDN" not in r["source"]]
    assert all("[" in r["source"] for r in from_points)  # "[third-party ...]", "[verified-in-source ...]"
    promotion = [r for r in data if r["provider"] == "aliyun" and r["billing"] == "monthly"]
    assert any("PROMOTION price" in r["source"] for r in promotion)


def test_one_price_per_instance_billing_and_day_the_cheapest_with_the_others_named():
    data = rows()
    keys = [(r["provider"], r["region"], r["instance_type"], r["billing"], r["observed_at"]) for r in data]
    assert len(keys) == len(set(keys))  # the database keeps one: a second would be silently dropped
    (rtx5090,) = [r for r in data if r["instance_type"] == "RTX 5090" and r["observed_at"] == "2026-04-01"]
    assert rtx5090["price"] == "2.93" and "other figures that day: 3.24 CNY" in rtx5090["source"]
    assert max(len(r["source"]) for r in data) <= 500  # the importer's field limit


def test_autodl_points_use_autodl_gpu_names_so_one_gpu_is_one_series():
    names = {(r["gpu_model"], r["instance_type"]) for r in rows() if r["provider"] == "autodl"}
    by_model: dict[str, set[str]] = {}
    for model, itype in names:
        by_model.setdefault(model, set()).add(itype)
    assert by_model["H800-80GB"] == {"H800"} and by_model["H20-96GB"] == {"H20-NVLink"}
    assert by_model["A100-40GB"] == {"A100-PCIE-40GB"}
