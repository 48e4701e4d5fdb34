"""The bundled snapshot: sourced, dated, reproducible from shared/data, and loaded only when needed."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from planner.config import load_config
from planner.snapshot import ensure_prices, snapshot_info, snapshot_path

SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


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
    from planner import snapshot_build

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
