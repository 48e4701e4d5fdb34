"""``planner refresh``: today's prices from every enabled provider, each provider in isolation.

How one refresh runs:

- Every provider named (default: all of ``scrapers.registry.PROVIDERS``) gets its own ``scrape_runs``
  row. A provider disabled in the config (``[providers.<name>] enabled = false``), or with nothing
  recorded in a ``--from-raw`` folder, is a ``skipped`` run.
- The others scrape at the same time, at most ``[refresh] concurrency`` at once, each in a daemon thread
  that only talks HTTP and normalises (``planner.normalize``). The calling thread stores each result as
  it arrives, in one transaction per provider, so a provider's prices are all stored or none are.
- A provider that takes longer than ``[refresh] provider_timeout_s`` is marked ``failed`` ("timed out")
  and whatever it returns later is ignored; a provider that fails, hangs or returns garbage (every offer
  refused) stores nothing, so its last good prices stay the latest ones. History is append-only: a
  second refresh on the same day adds no price (one per instance, billing mode and UTC day) but does
  record availability again (``availability`` is one row per run).
- An instance a provider now labels with another GPU (``InstanceConflict``) is not stored; its offers
  are counted and named, and the rest of the run is stored.
- A stored price more than tenfold above or below the previous observation is flagged (counted and
  named in the summary and the run row), not refused: the provider may really have cut a price. When
  most of a run's prices move tenfold at once (``MASS_MOVE_SHARE`` of them, at least
  ``MASS_MOVE_MIN``), that is a unit or shape change, not a sale: the run fails and stores nothing.
- A provider that returns no offers at all where its last good refresh in the same mode returned
  some fails ("its pages or API changed"), so an emptied list never passes for a quiet night.
- Text that reaches the run row (errors, notes, unknown GPU names) is cleaned of control characters
  and capped, so a provider's junk cannot make the database refuse the row.

``--save-raw DIR`` writes every response to ``DIR/<provider>/`` (secrets removed) plus
``DIR/manifest.json`` (mode, regions and options per provider). ``--from-raw DIR`` replays such a folder
with no network, with the recorded regions and options, and with placeholder credentials where the
recording was made in account mode (the real ones are never needed: nothing is sent).

The exit code (``RefreshSummary.exit_code``) is 0 when every provider ended ``ok``, ``partial`` (some
regions failed, the rest stored) or ``skipped``, and 1 when any provider ``failed``.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import os
import queue
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy import exc as sa_exc
from sqlalchemy import select
from sqlalchemy.engine import Engine

from db import store
from planner import __version__
from planner.config import Config, data_dir
from planner.errors import DatabaseError
from planner.normalize import Normalized, Offer, is_suspicious_move, normalize_offers
from planner.providers import canonical_provider

MANIFEST = "manifest.json"
REPLAY_CREDENTIAL = "planner-replay-placeholder"
MAX_LISTED = 5  # names listed per summary line before "and N more"
WRITE_HINT = (
    "nothing was refreshed; check that the disk has room and the database (file or server) is writable"
)
MAX_NAME_CHARS = 80  # a name quoted in a note (an unknown GPU, say) is cut here
MAX_TEXT_CHARS = 4000  # an error or the notes of one run
MASS_MOVE_MIN = 3  # at least this many tenfold moves ...
MASS_MOVE_SHARE = 0.5  # ... and more than this share of the run's stored prices: the run is refused


@dataclass(frozen=True)
class ProviderOutcome:
    """How one provider's refresh ended (one ``scrape_runs`` row)."""

    provider: str
    status: str  # "ok" | "partial" | "failed" | "skipped"
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
        return self.status in ("ok", "partial", "skipped")

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclass(frozen=True)
class RefreshSummary:
    """Every provider's outcome, in the order asked for."""

    outcomes: tuple[ProviderOutcome, ...]

    @property
    def exit_code(self) -> int:
        """0 when every provider succeeded (ok/partial) or was skipped, 1 when any failed."""
        return 0 if all(o.succeeded for o in self.outcomes) else 1

    def to_dict(self) -> dict[str, Any]:
        return {"exit_code": self.exit_code, "outcomes": [o.to_dict() for o in self.outcomes]}


@dataclass
class _Job:
    """One provider to scrape: its class, settings, client options, and its run row once started."""

    name: str
    cls: Any
    settings: Any
    mode: str
    client_kw: dict[str, Any]
    run_id: int = 0  # set when the run row is opened
    started: float = 0.0
    secrets: tuple[str, ...] = ()


@dataclass
class _Scraped:
    """What a worker thread hands back."""

    name: str
    result: Any = None  # scrapers.registry.ScrapeResult
    normalized: Normalized | None = None
    catalog_unknown: list[str] = field(default_factory=list)
    crash: str | None = None


def run_refresh(
    engine: Engine,
    config: Config,
    providers: Sequence[str] | None = None,
    *,
    save_raw: Path | None = None,
    from_raw: Path | None = None,
    progress: Callable[[str], None] | None = None,
    env: Mapping[str, str] | None = None,
) -> RefreshSummary:
    """Refresh ``providers`` (default: all) into ``engine``; never raises for a provider's failure.

    Call it holding ``planner.locks.refresh_lock`` (the command and the scheduler do): refresh runs
    left ``running`` by a killed process are closed as ``interrupted`` first. Raises
    ``UnknownNameError`` for a provider name we do not know and ``DatabaseError`` when the database
    cannot record the runs at all.
    """
    from scrapers import registry

    env = os.environ if env is None else env
    say = progress or (lambda line: None)
    names = (
        list(dict.fromkeys(canonical_provider(p) for p in providers))
        if providers
        else list(registry.PROVIDERS)
    )
    save_raw = Path(save_raw) if save_raw else None
    from_raw = Path(from_raw) if from_raw else None
    manifest = _read_manifest(from_raw) if from_raw else {}
    all_secrets = tuple(
        v for cls in registry.PROVIDERS.values() for v in registry.read_credentials(cls, env).values()
    )
    _close_interrupted(engine, say)
    outcomes: dict[str, ProviderOutcome] = {}
    jobs: list[_Job] = []
    for name in names:
        cls = registry.PROVIDERS[name]
        section = config.provider(name)
        reason = None
        if not section.get("enabled", True):
            reason = f"disabled in the config (set [providers.{name}] enabled = true to refresh it)"
        elif from_raw and not (from_raw / name).is_dir():
            reason = f"nothing recorded for {name} in {from_raw}"
        if reason:
            outcomes[name] = _skip(engine, name, reason)
            say(f"{name}: skipped, {reason}")
            continue
        jobs.append(_job(name, cls, section, config, env, manifest.get(name), save_raw, from_raw))
    concurrency = max(1, int(config.section("refresh").get("concurrency", 4)))
    timeout_s = float(config.section("refresh").get("provider_timeout_s", 900))
    fx = config.section("fx")
    if jobs:
        say(f"refreshing {', '.join(j.name for j in jobs)} ({min(concurrency, len(jobs))} at a time)")
    results: queue.Queue[_Scraped] = queue.Queue()
    waiting, running = list(jobs), dict[str, _Job]()
    while waiting or running:
        while waiting and len(running) < concurrency:
            job = waiting.pop(0)
            job.run_id = _start_run(engine, job)
            job.started = time.monotonic()
            job.secrets = all_secrets
            running[job.name] = job
            where = f", replaying {from_raw / job.name}" if from_raw else ""
            say(f"{job.name}: started ({job.mode} mode{where})")
            threading.Thread(
                target=_work, args=(job, fx, results), name=f"refresh-{job.name}", daemon=True
            ).start()
        next_deadline = min(j.started + timeout_s for j in running.values())
        try:
            scraped = results.get(timeout=max(0.0, next_deadline - time.monotonic()))
        except queue.Empty:
            scraped = None
        if scraped is not None and scraped.name in running:
            job = running.pop(scraped.name)
            try:
                outcomes[job.name] = _finish(engine, job, scraped, all_secrets)
            except Exception as err:  # a bug of ours in storing must not cost the others their run
                outcomes[job.name] = _fail(
                    engine, job, f"unexpected {type(err).__name__} while storing: {err}", 0
                )
            say(_progress_line(outcomes[job.name]))
        now = time.monotonic()
        for name, job in list(running.items()):
            if now >= job.started + timeout_s:
                del running[name]  # the thread is abandoned (a daemon); what it returns is ignored
                error = f"timed out after {timeout_s:g} s (the provider hung or is very slow)"
                outcomes[name] = _fail(engine, job, error, offers=0)
                say(_progress_line(outcomes[name]))
    if save_raw:
        _write_manifest(save_raw, jobs)
    return RefreshSummary(tuple(outcomes[n] for n in names))


def _job(
    name: str,
    cls: Any,
    section: Mapping[str, Any],
    config: Config,
    env: Mapping[str, str],
    recorded: Mapping[str, Any] | None,
    save_raw: Path | None,
    from_raw: Path | None,
) -> _Job:
    from scrapers.registry import ProviderSettings, read_credentials

    options: dict[str, Any] = {}
    if section.get("charge_types"):
        options["charge_types"] = tuple(section["charge_types"])
    regions = tuple(section.get("regions") or ())
    credentials = read_credentials(cls, env)
    if from_raw:
        # Replay what was recorded: its regions and options, and its mode (placeholders stand in for
        # account credentials; nothing is sent, so the real ones are never needed).
        recorded = recorded or {}
        regions = tuple(recorded.get("regions", regions))
        options.update(recorded.get("options", {}))
        account = recorded.get("mode") == "account"
        credentials = {n: REPLAY_CREDENTIAL for n in cls.credential_env} if account else {}
    elif name == "aliyun":
        options["state_path"] = str(data_dir() / "state" / "aliyun.json")  # the last good price file
    settings = ProviderSettings(
        enabled=True,
        base_url=section.get("base_url") or None,
        regions=regions,
        options=options,
        credentials=credentials,
    )
    mode = cls().mode(credentials).mode
    http = config.section("http")
    policy = dataclasses.replace(
        cls.http_policy,
        connect_timeout_s=float(http.get("connect_timeout_s", cls.http_policy.connect_timeout_s)),
        read_timeout_s=float(http.get("read_timeout_s", cls.http_policy.read_timeout_s)),
        max_retries=int(http.get("retries", cls.http_policy.max_retries)),
        backoff_base_s=float(http.get("backoff_s", cls.http_policy.backoff_base_s)),
        min_interval_s=float(section.get("min_interval_s", cls.http_policy.min_interval_s)),
    )
    client_kw = {
        "version": __version__,
        "save_raw_dir": save_raw,
        "from_raw_dir": from_raw,
        "policy": policy,
        "user_agent": http.get("user_agent") or None,
    }
    return _Job(name, cls, settings, f"{mode}/replay" if from_raw else mode, client_kw)


def _work(job: _Job, fx: Mapping[str, object], results: queue.Queue[_Scraped]) -> None:
    """A worker thread: scrape and normalise one provider; always hands something back."""
    from scrapers.base import ScrapeError
    from scrapers.registry import ScrapeResult, collect, make_client

    out = _Scraped(job.name)
    try:
        scraper = job.cls()
        kw = dict(job.client_kw)
        user_agent = kw.pop("user_agent")
        try:
            client = make_client(job.cls, job.settings, **kw)
        except ScrapeError as err:  # a bad base_url, say
            out.result = ScrapeResult(job.name, "failed", [], [], str(err))
        else:
            if user_agent:
                client.session.headers["User-Agent"] = user_agent  # [http] user_agent, as configured
            out.result = collect(scraper, client, job.settings)
            out.catalog_unknown = _catalog_unknowns(scraper)
        if out.result.status != "failed":
            out.normalized = normalize_offers(out.result.offers, fx)
    except Exception as err:  # a bug of ours must not cost the other providers their run
        out.crash = f"unexpected {type(err).__name__} while refreshing: {err}"
    results.put(out)


def _catalog_unknowns(scraper: Any) -> list[str]:
    """GPU names in a provider's own GPU list (AutoDL's ``catalog``) that our catalog does not know."""
    from planner import catalog
    from planner.errors import UsageError

    unknown = []
    for entry in getattr(scraper, "catalog", None) or []:
        name = getattr(entry, "name", None)
        if not isinstance(name, str):
            continue
        try:
            catalog.canonical_name(name, getattr(entry, "memory_gb", None))
        except UsageError:  # UnknownNameError is one too
            unknown.append(name)
    return sorted(set(unknown))


def _close_interrupted(engine: Engine, say: Callable[[str], None]) -> None:
    try:
        with engine.begin() as conn:
            closed = store.close_interrupted_runs(conn, "refresh")
    except sa_exc.SQLAlchemyError as err:
        raise DatabaseError(f"cannot record runs: {_first_line(err)}", hint=WRITE_HINT) from None
    if closed:
        say(f"{closed} earlier refresh run(s) left 'running' by a killed process marked interrupted")


def _start_run(engine: Engine, job: _Job) -> int:
    try:
        with engine.begin() as conn:
            return store.start_run(conn, job.name, "refresh", source=_source(job), mode=job.mode)
    except sa_exc.SQLAlchemyError as err:
        raise DatabaseError(
            f"cannot record the {job.name} run: {_first_line(err)}", hint=WRITE_HINT
        ) from None


def _source(job: _Job) -> str:
    if job.client_kw.get("from_raw_dir"):
        return f"replay of {job.client_kw['from_raw_dir']}"
    base = job.settings.base_url
    return f"live via {base}" if base else "live"


def _skip(engine: Engine, name: str, reason: str) -> ProviderOutcome:
    try:
        with engine.begin() as conn:
            run_id = store.start_run(conn, name, "refresh")
            store.finish_run(conn, run_id, "skipped", error=reason)
    except sa_exc.SQLAlchemyError as err:
        raise DatabaseError(f"cannot record the {name} run: {_first_line(err)}", hint=WRITE_HINT) from None
    return ProviderOutcome(name, "skipped", 0, 0, 0, 0.0, reason, (), run_id)


def _fail(engine: Engine, job: _Job, error: str, offers: int, **extra: Any) -> ProviderOutcome:
    error = _clean(_scrub(error, job.secrets), MAX_TEXT_CHARS)
    seconds = round(time.monotonic() - job.started, 3)
    notes = tuple(
        _clean(_scrub(n, job.secrets), MAX_TEXT_CHARS, keep_lines=True) for n in extra.pop("notes", ())
    )
    unknown = tuple(_clean(u, MAX_NAME_CHARS) for u in extra.pop("unknown_gpus", ()))
    try:
        with engine.begin() as conn:
            store.finish_run(
                conn,
                job.run_id,
                "failed",
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
        job.name, "failed", offers, 0, 0, seconds, error, unknown, job.run_id, job.mode, notes=notes, **extra
    )


def _finish(engine: Engine, job: _Job, scraped: _Scraped, secrets: tuple[str, ...]) -> ProviderOutcome:
    """Store one provider's result in one transaction (or record why nothing was stored)."""
    if scraped.crash:
        return _fail(engine, job, scraped.crash, offers=0)
    result, normalized = scraped.result, scraped.normalized
    notes = [f"{i.kind}: {i.message}" for i in result.notes]
    skipped_issues = result.skipped
    if skipped_issues:
        notes.append(f"{len(skipped_issues)} offer(s) skipped by the scraper: {_by_reason(skipped_issues)}")
    offer_unknown = {
        _clean(k, MAX_NAME_CHARS): v for k, v in (normalized.unknown_gpus if normalized else {}).items()
    }
    catalog_unknown = {_clean(k, MAX_NAME_CHARS) for k in scraped.catalog_unknown}
    unknown = tuple(sorted(catalog_unknown | set(offer_unknown)))
    if unknown:
        named = [
            f"{name} ({offer_unknown[name]} offer(s) not stored)"
            if name in offer_unknown
            else f"{name} (GPU list)"
            for name in unknown
        ]
        notes.append(
            f"unknown GPUs: {_listed(named)}; a real card needs its name among the aliases in planner/data/gpus.csv"
        )
    if result.status == "failed":
        lost = [
            i.message
            for i in result.issues
            if i.kind == "region_failed" and i.message not in (result.error or "")
        ]
        if lost:  # the error names the whole run; the notes say what each region or zone answered
            notes.append(f"{len(lost)} region/zone call(s) failed: {_listed(lost)}")
        return _fail(engine, job, result.error or "failed", offers=0, notes=notes, unknown_gpus=unknown)
    assert normalized is not None
    if normalized.rejected:
        notes.append(f"{len(normalized.rejected)} price(s) refused: {_listed(list(normalized.rejected))}")
    skipped = len(skipped_issues) + sum(normalized.unknown_gpus.values()) + len(normalized.rejected)
    offers_seen = len(result.offers)
    if not offers_seen:
        went_quiet = _went_quiet(engine, job)
        if went_quiet:
            return _fail(engine, job, went_quiet, offers=0, notes=notes, unknown_gpus=unknown)
    if offers_seen and not normalized.offers:
        garbage = f"{job.name}: none of the {offers_seen} offers could be stored (unknown GPUs or refused prices: see notes)"
        return _fail(
            engine, job, garbage, offers=offers_seen, notes=notes, unknown_gpus=unknown, skipped=skipped
        )
    try:
        with engine.begin() as conn:
            kept, conflicts = _without_conflicts(conn, normalized.offers)
            ids = store.upsert_instances(conn, [_instance_row(o) for o in kept])
            observed_at = store.utcnow()
            counts = store.insert_prices(conn, [_price_row(o, observed_at) for o in kept], ids, job.run_id)
            stock = [_availability_row(o, observed_at) for o in kept if o.has_availability]
            stocked = store.insert_availability(conn, stock, ids, job.run_id)
            if stocked:
                notes.append(f"stock recorded for {stocked} offer(s)")
            if conflicts:
                notes.append(
                    f"{len(conflicts)} offer(s) not stored, their instance is recorded with "
                    f"another GPU: {_listed(conflicts)}"
                )
            flagged = tuple(
                f"{'/'.join(c.instance[1:])} {c.billing}: {c.before} on {c.before_day} -> {c.after}"
                for c in counts.changes
                if is_suspicious_move(c.before, c.after)
            )
            if len(flagged) >= MASS_MOVE_MIN and len(flagged) > MASS_MOVE_SHARE * counts.stored:
                raise _Refused(
                    f"{job.name}: {len(flagged)} of {counts.stored} prices moved more than tenfold at once (e.g. "
                    f"{flagged[0]}): a unit or format change, not a price change; nothing stored, "
                    "the last good prices stay in use"
                )
            if flagged:
                notes.append(
                    f"{len(flagged)} price(s) moved more than tenfold (stored; check them): "
                    + _listed(list(flagged))
                )
            skipped += len(conflicts)
            error = _clean(_scrub(result.error, secrets), MAX_TEXT_CHARS) if result.error else None
            notes = [_clean(_scrub(n, secrets), MAX_TEXT_CHARS, keep_lines=True) for n in notes]
            store.finish_run(
                conn,
                job.run_id,
                result.status,
                offers_seen=offers_seen,
                prices_stored=counts.stored,
                prices_changed=counts.changed,
                unknown_gpus=", ".join(unknown) or None,
                error=error,
                mode=job.mode,
                offers_skipped=skipped,
                prices_flagged=len(flagged),
                notes="\n".join(notes) or None,
            )
    except _Refused as refused:
        return _fail(
            engine, job, str(refused), offers=offers_seen, notes=notes, unknown_gpus=unknown, skipped=skipped
        )
    except sa_exc.SQLAlchemyError as err:
        reason = _first_line(err)
        return _fail(
            engine,
            job,
            f"database error, nothing stored: {reason}",
            offers=offers_seen,
            notes=notes,
            unknown_gpus=unknown,
            skipped=skipped,
        )
    return ProviderOutcome(
        provider=job.name,
        status=result.status,
        offers=offers_seen,
        stored=counts.stored,
        changed=counts.changed,
        seconds=round(time.monotonic() - job.started, 3),
        error=error,
        unknown_gpus=unknown,
        run_id=job.run_id,
        mode=job.mode,
        skipped=skipped,
        already_present=counts.already_present,
        availability=stocked,
        flagged=flagged,
        notes=tuple(notes),
    )


class _Refused(Exception):
    """Raised inside a provider's transaction to roll it back: the run is failed with this message."""


def _went_quiet(engine: Engine, job: _Job) -> str | None:
    """Why a run with no offers is a failure: the last good run in the same mode had some (else None)."""
    from db.schema import scrape_runs as runs

    mode = job.mode.split("/")[0]
    query = (
        select(runs.c.offers_seen, runs.c.started_at)
        .where(
            runs.c.provider == job.name,
            runs.c.kind == "refresh",
            runs.c.status.in_(("ok", "partial")),
            runs.c.offers_seen > 0,
            runs.c.id != job.run_id,
            (runs.c.mode == mode) | runs.c.mode.like(f"{mode}/%"),
        )
        .order_by(runs.c.id.desc())
        .limit(1)
    )
    try:
        with engine.connect() as conn:
            last = conn.execute(query).first()
    except sa_exc.SQLAlchemyError:
        return None
    if last is None:
        return None
    return (
        f"{job.name} returned no offers, where its last good refresh ({last[1]:%Y-%m-%d}) returned {last[0]}: "
        "its pages or API have probably changed; the last good prices stay in use"
    )


def _without_conflicts(conn: Any, offers: Sequence[Offer]) -> tuple[list[Offer], list[str]]:
    """Offers whose instance is new or recorded with the same GPU, and the names of the others."""
    recorded = store.recorded_instances(conn, {o.instance_key for o in offers})
    kept, conflicts = [], []
    for offer in offers:
        known = recorded.get(offer.instance_key)
        if known and (known[1] != offer.gpu_model or abs(known[2] - offer.gpu_count) > 1e-9):
            conflicts.append(
                f"{offer.region}/{offer.instance_type} {offer.billing} is recorded as {known[2]:g}x "
                f"{known[1]}, now {offer.gpu_count:g}x {offer.gpu_model}"
            )
            continue
        kept.append(offer)
    return kept, conflicts


def _instance_row(offer: Offer) -> store.InstanceRow:
    return store.InstanceRow(
        provider=offer.provider,
        region=offer.region,
        instance_type=offer.instance_type,
        gpu_model=offer.gpu_model,
        gpu_count=offer.gpu_count,
        vcpus=offer.vcpus,
        memory_gb=offer.memory_gb,
        gpu_note=offer.gpu_note,
    )


def _price_row(offer: Offer, observed_at: dt.datetime) -> store.PriceRow:
    return store.PriceRow(
        instance=offer.instance_key,
        billing=offer.billing,
        price=offer.price,
        currency=offer.currency,
        unit=offer.unit,
        cny_per_gpu_hour=offer.cny_per_gpu_hour,
        observed_at=observed_at,
        source=offer.source or None,
        tiers=offer.tiers_json,
        median_price=offer.median_price,
    )


def _availability_row(offer: Offer, observed_at: dt.datetime) -> store.AvailabilityRow:
    return store.AvailabilityRow(
        instance=offer.instance_key,
        billing=offer.billing,
        observed_at=observed_at,
        stock_status=offer.stock_status,
        idle_gpus=offer.idle_gpus,
        total_gpus=offer.total_gpus,
    )


def _progress_line(o: ProviderOutcome) -> str:
    if o.status == "failed":
        return f"{o.provider}: failed after {o.seconds:.1f} s: {o.error}"
    line = f"{o.provider}: {o.status} in {o.seconds:.1f} s: {o.offers} offers, {o.stored} new, {o.changed} changed"
    return line + (f" ({o.error})" if o.error else "")


def _by_reason(issues: Sequence[Any]) -> str:
    """ "GPU count unknown from the name: ecs.a, ecs.b and 3 more; ..." from skipped Issues."""
    reasons: dict[str, list[str]] = {}
    for issue in issues:
        itype, message = issue.instance_type, issue.message
        if itype and itype in message:
            message = message.split(itype, 1)[1].lstrip(" :") or message
        names = reasons.setdefault(message, [])
        if itype and itype not in names:
            names.append(itype)
    return "; ".join(
        f"{reason} ({_listed(names, ', ')})" if names else reason for reason, names in reasons.items()
    )


def _listed(items: Sequence[str], sep: str = "; ") -> str:
    shown = sep.join(items[:MAX_LISTED])
    return shown + (f"; and {len(items) - MAX_LISTED} more" if len(items) > MAX_LISTED else "")


def _first_line(err: Exception) -> str:
    text = str(getattr(err, "orig", None) or err).strip()
    return text.splitlines()[0] if text else type(err).__name__


def _clean(text: str, limit: int, keep_lines: bool = False) -> str:
    """``text`` without control characters (NUL is refused by PostgreSQL), cut to ``limit`` characters."""
    kept = "\n" if keep_lines else ""
    text = "".join(c if c in kept or not (ord(c) < 32 or ord(c) == 127) else " " for c in str(text))
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _scrub(text: str, secrets: tuple[str, ...]) -> str:
    for secret in secrets:
        if secret:
            text = text.replace(secret, "***")
    return text


def _read_manifest(folder: Path) -> dict[str, Any]:
    try:
        data = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    providers = data.get("providers") if isinstance(data, dict) else None
    return providers if isinstance(providers, dict) else {}


def _write_manifest(folder: Path, jobs: Sequence[_Job]) -> None:
    """Record per provider what a replay needs to ask the same questions: mode, regions, options."""
    folder.mkdir(parents=True, exist_ok=True)
    providers = _read_manifest(folder)
    for job in jobs:
        options = {k: list(v) if isinstance(v, tuple) else v for k, v in job.settings.options.items()}
        options.pop("state_path", None)
        providers[job.name] = {
            "mode": job.mode.split("/")[0],
            "regions": list(job.settings.regions),
            "options": options,
            "recorded_at": store.utcnow().isoformat() + "Z",
        }
    doc = {"planner_version": __version__, "providers": dict(sorted(providers.items()))}
    (folder / MANIFEST).write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
