"""``planner refresh``: today's prices from every enabled provider, each provider in isolation.

How one refresh runs:

- Every provider named (default: all of ``scrapers.registry.PROVIDERS``) gets its own ``scrape_runs``
  row. A provider disabled in the config (``[providers.<name>] enabled = false``), or with nothing
  recorded in a ``--from-raw`` folder, is a ``skipped`` run.
- The others scrape at the same time, at most ``[refresh] concurrency`` at once, each in a daemon thread
  that only talks HTTP and normalises (``planner.ingest.normalize``). The calling thread stores each result as
  it arrives, in one transaction per provider, so a provider's prices are all stored or none are.
- A provider that takes longer than ``[refresh] provider_timeout_s`` is marked ``failed`` ("timed out")
  and whatever it returns later is ignored; a provider that fails, hangs or returns garbage (every offer
  refused) stores nothing, so its last good prices stay the latest ones. History is append-only: a
  second refresh on the same day adds no price (one per instance, billing mode and UTC day) but does
  record availability again (``availability`` is one row per run).

Storing and checking one provider's result is ``planner.ingest.store``; the ``scrape_runs`` rows
(opened, skipped, failed, interrupted) and the records passed between the parts are
``planner.ingest.runs``; the text that reaches a run row is cleaned by ``planner.ingest.run_text``.

``--save-raw DIR`` writes every response to ``DIR/<provider>/`` (secrets removed) plus
``DIR/manifest.json`` (``planner.ingest.manifest``: mode, regions and options per provider).
``--from-raw DIR`` replays such a folder with no network, with the recorded regions and options, and
with placeholder credentials where the recording was made in account mode (the real ones are never
needed: nothing is sent).

The exit code (``RefreshSummary.exit_code``) is 0 when every provider ended ``ok``, ``partial`` (some
regions failed, the rest stored) or ``skipped``, and 1 when any provider ``failed``.
"""

from __future__ import annotations

import contextvars
import dataclasses
import os
import queue
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy.engine import Engine

from planner import __version__, catalog
from planner.config import SMTP_PASSWORD_ENV, Config, data_dir, plain_http_hint, plain_http_refused
from planner.errors import PlannerError, UsageError
from planner.ingest.manifest import read_manifest, recorded_at, write_manifest
from planner.ingest.normalize import normalize_offers
from planner.ingest.runs import (
    ProviderOutcome,
    Scraped,
    ScrapeJob,
    close_interrupted,
    fail,
    mark_interrupted,
    provider_timeout_s,
    skip,
    start_run,
)
from planner.ingest.store import finish
from planner.providers import canonical_provider
from scrapers.base import ScrapeError
from scrapers.recording import secret_forms
from vocab import RunStatus

REPLAY_CREDENTIAL = "planner-replay-placeholder"


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


def run_refresh(
    engine: Engine,
    config: Config,
    providers: Sequence[str] | None = None,
    *,
    save_raw: Path | None = None,
    from_raw: Path | None = None,
    progress: Callable[[str], None] | None = None,
    env: Mapping[str, str] | None = None,
    request_log: Callable[[str], None] | None = None,
) -> RefreshSummary:
    """Refresh ``providers`` (default: all) into ``engine``; never raises for a provider's failure.

    Call it holding ``planner.ingest.lock.refresh_lock`` (the command and the scheduler do): refresh runs
    left ``running`` by a killed process are closed as ``interrupted`` first. Raises
    ``UnknownNameError`` for a provider name we do not know and ``DatabaseError`` when the database
    cannot record the runs at all. ``request_log`` (``-v``) receives one line per HTTP request
    (method, URL, status, bytes, time; secrets removed), from the providers' threads.
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
    manifest = read_manifest(from_raw) if from_raw else {}
    # Every form in which any secret this process knows may be sent (the SMTP password too: a replayed
    # body may quote it), scrubbed from whatever a run stores or prints.
    known = [v for cls in registry.PROVIDERS.values() for v in registry.read_credentials(cls, env).values()]
    all_secrets = secret_forms([*known, env.get(SMTP_PASSWORD_ENV, "")])
    say(f"settings from {config.sources()}")
    close_interrupted(engine, say)
    outcomes: dict[str, ProviderOutcome] = {}
    jobs: list[ScrapeJob] = []
    for name in names:
        cls = registry.PROVIDERS[name]
        section = config.provider(name)
        reason = None
        replayed_at = None
        if not section.get("enabled", True):
            reason = f"disabled in the config (set [providers.{name}] enabled = true to refresh it)"
        elif from_raw and not (from_raw / name).is_dir():
            reason = f"nothing recorded for {name} in {from_raw}"
        elif from_raw:
            try:
                replayed_at = recorded_at(from_raw / name, manifest.get(name))
            except ValueError as err:
                reason = str(err)
        if reason:
            outcomes[name] = skip(engine, name, reason)
            say(f"{name}: skipped, {reason}")
            continue
        job = _job(name, cls, section, config, env, manifest.get(name), save_raw, from_raw)
        if from_raw:  # a replay's prices were seen when they were recorded, not today
            job.observed_at = replayed_at
        job.client_kw["request_log"] = request_log
        jobs.append(job)
    concurrency = max(1, int(config.section("refresh").get("concurrency", 4)))
    timeout_s = provider_timeout_s(config)
    fx = config.section("fx")
    if jobs:
        say(f"refreshing {', '.join(j.name for j in jobs)} ({min(concurrency, len(jobs))} at a time)")
    results: queue.Queue[Scraped] = queue.Queue()
    try:
        waiting, running = list(jobs), dict[str, ScrapeJob]()
        while waiting or running:
            while waiting and len(running) < concurrency:
                job = waiting.pop(0)
                job.run_id = start_run(engine, job)
                job.started = time.monotonic()
                job.secrets = all_secrets
                running[job.name] = job
                where = f", replaying {from_raw / job.name}" if from_raw else ""
                say(f"{job.name}: started ({job.mode} mode{where})")
                # in a copy of this context: a scheduled run's providers belong to its run
                # (scrapers.deadline.Job)
                threading.Thread(
                    target=contextvars.copy_context().run,
                    args=(_work, job, fx, results),
                    name=f"refresh-{job.name}",
                    daemon=True,
                ).start()
            next_deadline = min(j.started + timeout_s for j in running.values())
            try:
                scraped = results.get(timeout=max(0.0, next_deadline - time.monotonic()))
            except queue.Empty:
                scraped = None
            if scraped is not None and scraped.name in running:
                job = running.pop(scraped.name)
                try:
                    outcomes[job.name] = finish(engine, job, scraped, all_secrets)
                except Exception as err:  # a bug of ours in storing must not cost the others their run
                    outcomes[job.name] = fail(
                        engine, job, f"unexpected {type(err).__name__} while storing: {err}", 0
                    )
                say(_progress_line(outcomes[job.name]))
            now = time.monotonic()
            for name, job in list(running.items()):
                if now >= job.started + timeout_s:
                    del running[name]  # the thread is abandoned (a daemon); what it returns is ignored
                    error = f"timed out after {timeout_s:g} s (the provider hung or is very slow)"
                    outcomes[name] = fail(engine, job, error, offers=0)
                    say(_progress_line(outcomes[name]))
    except KeyboardInterrupt:  # Ctrl-C: the runs it leaves are interrupted now, not at the next refresh
        mark_interrupted(engine, say)
        raise
    if save_raw:
        try:
            write_manifest(save_raw, jobs)
        except OSError as err:
            raise PlannerError(
                f"cannot write the raw answers' manifest in {save_raw}: {err.strerror or err}",
                hint="check the disk has room; what each run stored is kept (see `planner runs`)",
            ) from None
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
) -> ScrapeJob:
    from scrapers.registry import ProviderSettings, read_credentials, state_options

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
    else:
        options.update(state_options(cls, data_dir() / "state"))  # e.g. Aliyun's last good price file
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
        deadline_s=float(http.get("deadline_s", cls.http_policy.deadline_s)),
        max_retries=int(http.get("retries", cls.http_policy.max_retries)),
        backoff_base_s=float(http.get("backoff_s", cls.http_policy.backoff_base_s)),
        min_interval_s=float(section.get("min_interval_s", cls.http_policy.min_interval_s)),
    )
    refused = None if from_raw else plain_http_refused(name, section, bool(credentials))
    client_kw = {
        "refused": f"{refused} ({plain_http_hint(name)})" if refused else None,
        "version": __version__,
        "save_raw_dir": save_raw,
        "from_raw_dir": from_raw,
        "policy": policy,
        "user_agent": http.get("user_agent") or None,
    }
    return ScrapeJob(name, cls, settings, f"{mode}/replay" if from_raw else mode, client_kw)


def _work(job: ScrapeJob, fx: Mapping[str, object], results: queue.Queue[Scraped]) -> None:
    """A worker thread: scrape and normalise one provider; always hands something back."""
    from scrapers.registry import ScrapeResult, collect, make_client

    out = Scraped(job.name)
    try:
        scraper = job.cls()
        kw = dict(job.client_kw)
        user_agent, refused = kw.pop("user_agent"), kw.pop("refused")
        try:
            if refused:
                raise ScrapeError(refused)
            client = make_client(job.cls, job.settings, **kw)
        except ScrapeError as err:  # a bad base_url, say
            out.result = ScrapeResult(job.name, RunStatus.FAILED, [], [], str(err))
        else:
            if user_agent:
                client.session.headers["User-Agent"] = user_agent  # [http] user_agent, as configured
            out.result = collect(scraper, client, job.settings)
            out.catalog_unknown = _catalog_unknowns(scraper)
        if out.result.status != RunStatus.FAILED:
            out.normalized = normalize_offers(out.result.offers, fx)
    except Exception as err:  # a bug of ours must not cost the other providers their run
        out.crash = f"unexpected {type(err).__name__} while refreshing: {err}"
    results.put(out)


def _catalog_unknowns(scraper: Any) -> list[str]:
    """GPU names in a provider's own GPU list (AutoDL's ``catalog``) that our catalog does not know."""
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


def _progress_line(o: ProviderOutcome) -> str:
    if o.status == RunStatus.FAILED:
        return f"{o.provider}: failed after {o.seconds:.1f} s: {o.error}"
    line = f"{o.provider}: {o.status} in {o.seconds:.1f} s: {o.offers} offers, {o.stored} new, {o.changed} changed"
    return line + (f" ({o.error})" if o.error else "")
