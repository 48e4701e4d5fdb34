"""What the golden-output tests of ``planner/views/`` share: a fixed today (ages in days are printed),
the prices they store, and the ``[fx]`` rates they cost them at."""

from __future__ import annotations

import datetime as dt
import types
from pathlib import Path

import pytest
from sqlalchemy.engine import Engine

from planner.config import load_config
from planner.ingest.importer import import_csv
from tests.conftest import price_row, write_csv

TODAY = dt.date(2026, 12, 1)
FX = load_config(env={}).section("fx")  # USD = 7.10

# Two A100 offers and an RTX 4090 one, one price over 90 days old (the "(old)" mark), a second A100
# price a month earlier (a 30-day history).
ROWS = [
    price_row(provider="tencent", region="ap-beijing", instance_type="GT4.4XLARGE96", gpu_model="A100-40GB",
              price="28.64", observed_at="2026-11-20"),
    price_row(provider="aliyun", region="cn-beijing", instance_type="ecs.gn7e-c16g1.32xlarge",
              gpu_model="A100-80GB", gpu_count=8, price="240", observed_at="2026-11-25"),
    price_row(provider="aliyun", region="cn-beijing", instance_type="ecs.gn7e-c16g1.32xlarge",
              gpu_model="A100-80GB", gpu_count=8, price="250", observed_at="2026-11-10"),
    price_row(provider="autodl", region="west-B", instance_type="RTX 4090", gpu_model="RTX4090-24GB",
              price="1.98", observed_at="2026-08-01"),
]  # fmt: skip


def freeze_today(monkeypatch: pytest.MonkeyPatch, today: dt.date = TODAY) -> None:
    """Offers' ages (``Offer.age_days``) counted from ``today``, so a table's age column is fixed."""
    from planner.pricing import offer

    class Clock(dt.datetime):
        @classmethod
        def now(cls, tz: dt.tzinfo | None = None) -> Clock:
            return cls(today.year, today.month, today.day, 12, tzinfo=tz)

    monkeypatch.setattr(offer, "dt", types.SimpleNamespace(datetime=Clock, UTC=dt.UTC))


def store_prices(engine: Engine, tmp_path: Path) -> Engine:
    """``engine`` with ``ROWS`` imported."""
    import_csv(engine, write_csv(tmp_path / "prices.csv", ROWS), FX)
    return engine
