"""The ``scrape_runs`` rows of a refresh, and the records a refresh passes around.

``ScrapeJob`` is one provider to scrape, ``Scraped`` what its worker thread hands back, ``ProviderOutcome`` how
it ended. A refresh closes the runs a killed process left ``running`` (``interrupted``; a refresh
stopped by Ctrl-C closes its own at once, ``mark_interrupted``), opens one run
per provider, and ends it ``skipped``, ``failed`` (here) or ``ok``/``partial``
(``planner.ingest.store``). A run row the database cannot record at the start is a ``DatabaseError``:
nothing was refreshed.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sqlalchemy import exc as sa_exc
from sqlalchemy.engine import Engine

from db import store
from planner.config import Config
from planner.errors import DatabaseError
from planner.ingest.normalize import Normalized
from planner.ingest.run_text import MAX_NAME_CHARS, MAX_TEXT_CHARS, clean, scrub
from planner.text import first_line
from scrapers.recording import redact_url
from vocab import RunStatus

if TYPE_CHECKING:  # the registry imports every provider's scraper (and requests): a refresh's, not a reader's
    from scrapers.registry import ProviderSettings, Scraper


@dataclass(frozen=True)
class ProviderOutcome:
    """How one provider's refresh ended (one ``scrape_runs`` row)."""

    provider: str
    status: RunStatus  # OK, PARTIAL, FAILED or SKIPPED
    offers: int  # offers the provider returned (before normalisation)
    stored: int  # new price observations
    changed: int  # of those, prices that differ from the previous observation
    seconds: float
    error: str | None
    unknown_gpus: tuple[str, ...]
    run_id: int | None
    mode: str | None = None  # "public" | "account", "/replay" appended when replayed
    skipped: int = 0  # offers not stored: skipped by the scraper, unknown GPU, refused, conflicting
    already_present: int = 0  # offers already observed today
    availability: int = 0  # stock observations stored
    flagged: tuple[str, ...] = ()  # prices that moved more than tenfold (stored, but look at them)
    notes: tuple[str, ...] = ()  # lines for the summary: warnings, notes, what was skipped and why

    @property
    def succeeded(self) -> bool:
        return self.status in (RunStatus.OK, RunStatus.PARTIAL, RunStatus.SKIPPED)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclass
class ScrapeJob:
    """One provider to scrape: its class, settings, client options, and its run row once started."""

    name: str
    cls: type[Scraper]
    settings: ProviderSettings
    mode: str
    client_kw: dict[str, Any]
    run_id: int = 0  # set when the run row is opened
    started: float = 0.0
    secrets: tuple[str, ...] = ()
    observed_at: dt.datetime | None = None  # when its prices were seen: a replay's recorded time; None: now


@dataclass
class Scraped:
    """What a worker thread hands back."""

    name: str
    result: Any = None  # scrapers.registry.ScrapeResult
    normalized: Normalized | None = None
    catalog_unknown: list[str] = field(default_factory=list)
    crash: str | None = None


def provider_timeout_s(config: Config) -> float:
    """``[refresh] provider_timeout_s``: how long one provider's refresh may take before it fails."""
    return float(config.section("refresh").get("provider_timeout_s", 900))


def seen_status(status: str, started_at: dt.datetime, now: dt.datetime, timeout_s: float) -> str:
    """A run's status as a reader should see it: one still ``running`` after twice the provider timeout
    has lost its process (a refresh ends every provider within the timeout), so it is ``interrupted``,
    as the next refresh records it (:func:`close_interrupted`, which may close younger ones too since
    it holds the refresh lock). The one place this judgement is made."""
    if status == RunStatus.RUNNING and (now - started_at).total_seconds() > 2 * timeout_s:
        return store.INTERRUPTED
    return status


def close_interrupted(engine: Engine, say: Callable[[str], None]) -> None:
    """Under the refresh lock no run can be live: every refresh run still ``running`` is interrupted."""
    try:
        with store.writing(engine) as conn:
            closed = store.close_interrupted_runs(conn, "refresh")
    except sa_exc.SQLAlchemyError as err:
        raise DatabaseError(
            f"cannot record runs: {first_line(err)}", hint=f"nothing was refreshed; {store.write_hint(err)}"
        ) from None
    if closed:
        say(f"{closed} earlier refresh run(s) left 'running' by a killed process marked interrupted")


def mark_interrupted(engine: Engine, say: Callable[[str], None]) -> None:
    """Ctrl-C (or SIGINT) during a refresh, under its lock: the runs it left ``running`` are
    ``interrupted`` now, not at the next refresh. Best effort: the interrupt is what the caller reports."""
    try:
        with store.writing(engine) as conn:
            closed = store.close_interrupted_runs(conn, "refresh", why="interrupted (Ctrl-C or SIGINT)")
    except sa_exc.SQLAlchemyError:
        return  # the next refresh closes them
    if closed:
        say(f"interrupted: {closed} refresh run(s) marked interrupted")


def start_run(engine: Engine, job: ScrapeJob) -> int:
    try:
        with store.writing(engine) as conn:
            return store.start_run(conn, job.name, "refresh", source=_source(job), mode=job.mode)
    except sa_exc.SQLAlchemyError as err:
        raise DatabaseError(
            f"cannot record the {job.name} run: {first_line(err)}",
            hint=f"nothing was refreshed; {store.write_hint(err)}",
        ) from None


def _source(job: ScrapeJob) -> str:
    if job.client_kw.get("from_raw_dir"):
        return f"replay of {job.client_kw['from_raw_dir']}"
    base = job.settings.base_url
    return f"live via {redact_url(base)}" if base else "live"  # never a password in a proxy's URL


def skip(engine: Engine, name: str, reason: str) -> ProviderOutcome:
    try:
        with store.writing(engine) as conn:
            run_id = store.start_run(conn, name, "refresh")
            store.finish_run(conn, run_id, RunStatus.SKIPPED, error=reason)
    except sa_exc.SQLAlchemyError as err:
        raise DatabaseError(
            f"cannot record the {name} run: {first_line(err)}",
            hint=f"nothing was refreshed; {store.write_hint(err)}",
        ) from None
    return ProviderOutcome(name, RunStatus.SKIPPED, 0, 0, 0, 0.0, reason, (), run_id)


def fail(engine: Engine, job: ScrapeJob, error: str, offers: int, **extra: Any) -> ProviderOutcome:
    error = clean(scrub(error, job.secrets), MAX_TEXT_CHARS)
    seconds = round(time.monotonic() - job.started, 3)
    notes = tuple(
        clean(scrub(n, job.secrets), MAX_TEXT_CHARS, keep_lines=True) for n in extra.pop("notes", ())
    )
    unknown = tuple(clean(u, MAX_NAME_CHARS) for u in extra.pop("unknown_gpus", ()))
    try:
        with store.writing(engine) as conn:
            store.finish_run(
                conn,
                job.run_id,
                RunStatus.FAILED,
                error=error,
                offers_seen=offers,
                offers_skipped=extra.get("skipped", 0),
                unknown_gpus=", ".join(unknown) or None,
                notes="\n".join(notes) or None,
                mode=job.mode,
            )
    except sa_exc.SQLAlchemyError:
        pass  # the run row stays "running"; the summary still says what happened
    return ProviderOutcome(
        job.name,
        RunStatus.FAILED,
        offers,
        0,
        0,
        seconds,
        error,
        unknown,
        job.run_id,
        job.mode,
        notes=notes,
        **extra,
    )
