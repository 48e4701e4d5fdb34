"""Golden output of ``planner.views.runs``: two runs and the health of their providers."""

from __future__ import annotations

import datetime as dt

from db.queries import ProviderHealth
from planner.answers.runs import RunList
from planner.views.runs import render_runs


def _run(id_: int, provider: str, status: str, error: str | None, **counts: object) -> dict[str, object]:
    return {
        "id": id_, "started_at": dt.datetime(2026, 11, 30, 2, id_), "provider": provider, "kind": "refresh",
        "status": status, "offers_seen": 120, "prices_stored": 100, "prices_changed": 3,
        "offers_skipped": None, "prices_flagged": 0, "seconds": 4.4, "error": error, "unknown_gpus": None,
    } | counts  # fmt: skip


def test_runs_and_health_render_as_before():
    found = RunList(
        runs=[
            _run(2, "aliyun", "failed", "HTTP 403 from ecs.aliyuncs.com", offers_seen=0, prices_stored=0,
                 prices_changed=0, seconds=None),
            _run(1, "tencent", "ok", None, offers_skipped=2, unknown_gpus="NVIDIA X1"),
        ],
        health=[
            ProviderHealth("aliyun", "failed", dt.datetime(2026, 11, 30, 2, 2), "HTTP 403", None, 3),
            ProviderHealth("tencent", "ok", dt.datetime(2026, 11, 30, 2, 1), None, None, 0),
            ProviderHealth("volcengine", "failed", dt.datetime(2026, 11, 30, 2, 3), None,
                           dt.datetime(2026, 11, 28, 2, 0), 1),
        ],
    )  # fmt: skip
    assert render_runs(found) == RUNS
    assert render_runs(RunList(runs=[], health=[])) == RUNS_EMPTY


# What the views printed before they moved out of planner/commands/, byte for byte.
RUNS = """\
id  started (UTC)     provider  kind     status  offers  new  changed  skipped  flagged  secs  error
--  ----------------  --------  -------  ------  ------  ---  -------  -------  -------  ----  ------------------------------
 2  2026-11-30 02:02  aliyun    refresh  failed       0    0        0        0        0     -  HTTP 403 from ecs.aliyuncs.com
 1  2026-11-30 02:01  tencent   refresh  ok         120  100        3        2        0     4  -
run 1 (tencent): unknown GPUs NVIDIA X1

Health (refresh runs):
  aliyun: last refresh failed 2026-11-30 02:02 UTC (HTTP 403); never refreshed successfully (3 failed run(s))
  tencent: last refresh ok 2026-11-30 02:01 UTC
  volcengine: last refresh failed 2026-11-30 02:03 UTC; last good 2026-11-28 02:00 UTC (1 failed run(s) since; its prices are from then)"""


RUNS_EMPTY = """\
No runs yet. `planner refresh` pulls today's prices."""
