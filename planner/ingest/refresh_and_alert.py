"""A refresh as ``planner refresh`` and the scheduler's jobs run it: take the refresh lock, refresh,
then check the [[alerts]] rules while still holding the lock, so the check judges this refresh's
prices and no other refresh writes between the two."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from sqlalchemy.engine import Engine

from planner.config import Config
from planner.ingest.lock import refresh_lock

Summary = TypeVar("Summary")  # run_refresh's RefreshSummary, or what a test's stand-in returns


def refresh_and_alert(
    engine: Engine,
    config: Config,
    refresh: Callable[[], Summary],
    *,
    holder: str,
    say: Callable[[str], None],
    warn: Callable[[str], None] | None = None,
    alerts: bool = True,
) -> Summary:
    """``refresh()`` (a ``run_refresh`` call: its RefreshSummary is returned) under the lock, then,
    with ``alerts``, the alert check, which tells ``say`` what it sent and ``warn`` (default ``say``)
    what failed; a failing check never raises. LockBusy when another refresh holds the lock."""
    with refresh_lock(engine, holder=holder):
        summary = refresh()
        if alerts:
            from planner.alerts.check import after_refresh

            after_refresh(engine, config, say, warn)
    return summary
