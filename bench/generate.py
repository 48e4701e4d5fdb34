"""Synthetic but realistic price history, written in the import format.

About 1,400 instances across the four providers, three billing modes each, one observation a night for
``days`` nights: 1,400 x 3 x 240 = 1,008,000 rows by default. Prices behave the way real list prices
do: flat for weeks, then a step (a price cut, now and then a rise), with a little noise on the
marketplace (AutoDL) and on spot. Deterministic for a given seed.

``write_stock`` adds what the nightly refreshes of the providers that state stock would have recorded
beside those prices (Tencent sold out or not, AutoDL idle and total GPUs): one refresh run per provider
and night and one ``availability`` row per instance and billing mode, about half a million rows.

    python bench/generate.py --rows 1000000 --out /tmp/history.csv
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import random
import sys
from pathlib import Path

from vocab import IMPORT_REQUIRED_COLUMNS

# CNY per GPU-hour around which each model's on-demand prices sit (list prices seen in the snapshot).
BASE_CNY_PER_GPU_HOUR = {
    "A100-40GB": 28.0,
    "A100-80GB": 34.7,
    "A800-80GB": 33.8,
    "H800-80GB": 45.0,
    "H20-96GB": 35.0,
    "L20-48GB": 14.0,
    "A10-24GB": 9.5,
    "T4-16GB": 8.7,
    "V100-16GB": 22.0,
    "V100-32GB": 19.7,
    "RTX4090-24GB": 2.0,
    "RTX4090D-24GB": 1.9,
    "RTX3090-24GB": 1.3,
    "RTX5090-32GB": 2.8,
}
CLOUD_GPUS = [g for g in BASE_CNY_PER_GPU_HOUR if not g.startswith("RTX")]
PROVIDERS = {  # provider: (regions, instance count, modes)
    "aliyun": (
        ["cn-beijing", "cn-shanghai", "cn-hangzhou", "cn-shenzhen", "cn-wulanchabu"],
        520,
        ("on_demand", "monthly", "spot"),
    ),
    "tencent": (
        ["ap-beijing", "ap-shanghai", "ap-guangzhou", "ap-nanjing"],
        400,
        ("on_demand", "monthly", "spot"),
    ),
    "volcengine": (["cn-beijing", "cn-shanghai", "cn-guangzhou"], 180, ("on_demand", "monthly", "yearly")),
    "autodl": (
        ["west-A", "west-B", "north-A", "north-B", "south-A", "east-A"],
        300,
        ("on_demand", "daily", "monthly"),
    ),
}
GPU_COUNTS = (1, 2, 4, 8)
PERIOD_FACTOR = {
    "on_demand": 1.0,
    "spot": 0.35,
    "daily": 24 * 0.95,
    "monthly": 730 * 0.62,
    "yearly": 8760 * 0.5,
}
COLUMNS = [*IMPORT_REQUIRED_COLUMNS, "source"]  # each row below writes its cells in this order


def instances(rng: random.Random) -> list[tuple[str, str, str, str, int]]:
    out = []
    for provider, (regions, count, _) in PROVIDERS.items():
        for i in range(count):
            region = regions[i % len(regions)]
            if provider == "autodl":
                gpu = rng.choice(list(BASE_CNY_PER_GPU_HOUR))
                out.append((provider, region, f"{gpu} #{i}", gpu, 1))
            else:
                gpu = rng.choice(CLOUD_GPUS)
                n = rng.choice(GPU_COUNTS)
                out.append((provider, region, f"{provider[:3]}.{gpu.lower()}-{n}x.{i}", gpu, n))
    return out


def write(path: Path, rows_wanted: int, seed: int = 7, end: dt.date | None = None) -> int:
    rng = random.Random(seed)
    insts = instances(rng)
    per_night = sum(len(PROVIDERS[p][2]) for p, *_ in insts)
    nights = max(1, round(rows_wanted / per_night))
    end = end or dt.date.today() - dt.timedelta(days=1)
    days = [end - dt.timedelta(days=nights - 1 - d) for d in range(nights)]
    written = 0
    with path.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh, lineterminator="\n")
        writer.writerow(COLUMNS)
        for provider, region, itype, gpu, count in insts:
            base = BASE_CNY_PER_GPU_HOUR[gpu] * count * rng.uniform(0.85, 1.2)
            for mode in PROVIDERS[provider][2]:
                level = base * PERIOD_FACTOR[mode]
                noisy = provider == "autodl" or mode == "spot"
                for day in days:
                    if rng.random() < 0.01:  # a step: mostly cuts, sometimes a rise
                        level *= rng.choice((0.7, 0.8, 0.9, 0.95, 1.05, 1.1))
                    price = level * (rng.uniform(0.95, 1.05) if noisy else 1.0)
                    writer.writerow(
                        [
                            provider,
                            region,
                            itype,
                            gpu,
                            count,
                            mode,
                            f"{price:.4f}",
                            "CNY",
                            day.isoformat(),
                            "bench synthetic",
                        ]
                    )
                    written += 1
    return written


STOCK_PROVIDERS = ("tencent", "autodl")


def write_stock(url: str, seed: int = 7) -> int:
    """Refresh runs and stock observations for every night with prices in the database at ``url``."""
    from sqlalchemy import insert, select

    from db import store
    from db.engine import make_engine
    from db.schema import instances, prices, scrape_runs

    rng = random.Random(seed)
    engine = make_engine(url)
    written = 0
    with engine.begin() as conn:
        days = list(
            conn.execute(select(prices.c.observed_on).distinct().order_by(prices.c.observed_on)).scalars()
        )
        found = conn.execute(
            select(instances.c.id, instances.c.provider, instances.c.region, instances.c.instance_type)
            .where(instances.c.provider.in_(STOCK_PROVIDERS))
            .order_by(instances.c.id)
        ).all()
        ids = {(p, r, t): i for i, p, r, t in found}
        for day in days:
            at = dt.datetime.combine(day, dt.time(18, 0))  # 02:00 in Shanghai
            for provider in STOCK_PROVIDERS:
                run_id = conn.execute(
                    insert(scrape_runs).values(
                        provider=provider,
                        kind="refresh",
                        started_at=at,
                        finished_at=at + dt.timedelta(seconds=40),
                        status="ok",
                        offers_seen=0,
                        prices_stored=0,
                        prices_changed=0,
                        source="bench synthetic",
                        mode="public",
                    )
                ).inserted_primary_key[0]
                rows = []
                for _, p, region, itype in found:
                    if p != provider:
                        continue
                    for mode in PROVIDERS[provider][2]:
                        if provider == "autodl":
                            total = 8 * rng.randint(2, 60)
                            idle = rng.randint(0, total // 4)
                            rows.append(
                                store.AvailabilityRow((p, region, itype), mode, at, None, idle, total)
                            )
                        else:
                            status = "sold_out" if rng.random() < 0.1 else "available"
                            rows.append(store.AvailabilityRow((p, region, itype), mode, at, status))
                written += store.insert_availability(conn, rows, ids, run_id)
    engine.dispose()
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args(argv)
    written = write(args.out, args.rows, args.seed)
    print(f"wrote {written:,} rows to {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
