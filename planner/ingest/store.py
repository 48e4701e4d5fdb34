"""Storing and checking one provider's scraped result, in one transaction per provider.

- An instance a provider now labels with another GPU (``InstanceConflict``) is not stored; its offers
  are counted and named, and the rest of the run is stored.
- A stored price more than tenfold above or below the previous observation is flagged (counted and
  named in the summary and the run row), not refused: the provider may really have cut a price. When
  most of a run's prices move tenfold at once (``MASS_MOVE_SHARE`` of them, at least
  ``MASS_MOVE_MIN``), that is a unit or shape change, not a sale: the run fails and stores nothing.
- A provider that returns no offers at all where its last good refresh in the same mode returned
  some fails ("its pages or API changed"), so an emptied list never passes for a quiet night.
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sqlalchemy import exc as sa_exc
from sqlalchemy import select
from sqlalchemy.engine import Engine

from db import run_offers, store
from planner.ingest.normalize import NormalizedOffer, is_suspicious_move
from planner.ingest.run_text import (
    MAX_NAME_CHARS,
    MAX_TEXT_CHARS,
    by_reason,
    clean,
    listed,
    scrub,
)
from planner.ingest.runs import ProviderOutcome, Scraped, ScrapeJob, fail
from planner.text import first_line
from vocab import STORED_RUN_STATUSES, RunStatus

if TYPE_CHECKING:
    from sqlalchemy.engine import Connection

MASS_MOVE_MIN = 3  # at least this many tenfold moves ...
MASS_MOVE_SHARE = 0.5  # ... and more than this share of the run's stored prices: the run is refused


@dataclass(frozen=True)
class LastGoodRun:
    """The provider's last refresh that stored offers, in the same mode (for a run that returned none)."""

    offers_seen: int
    started_at: dt.datetime


@dataclass(frozen=True)
class Assessment:
    """What one provider's result is worth, judged before the database is touched.

    With ``failure`` set the run fails with that text and stores nothing; otherwise ``offers`` go to
    the store step. ``notes`` are the summary's lines so far (the store step adds its own).
    """

    offers_seen: int  # offers the provider returned (0 when the run failed before they counted)
    offers: tuple[NormalizedOffer, ...]
    notes: tuple[str, ...]
    unknown_gpus: tuple[str, ...]
    skipped: int  # offers not stored: skipped by the scraper, unknown GPU, refused
    failure: str | None = None


def returned_nothing(scraped: Scraped) -> bool:
    """A run that ended well but returned no offers: it fails if its last good run had some."""
    return not scraped.crash and scraped.result.status != RunStatus.FAILED and not scraped.result.offers


def assess(name: str, scraped: Scraped, last_good: LastGoodRun | None = None) -> Assessment:
    """Judge one provider's scraped and normalised result (pure: no database, no clock).

    ``last_good`` is the provider's last good run, looked up when :func:`returned_nothing`.
    """
    if scraped.crash:
        return Assessment(0, (), (), (), 0, scraped.crash)
    result, normalized = scraped.result, scraped.normalized
    notes = [f"{i.kind}: {i.message}" for i in result.notes]
    notes += [f"warning: {n}" for n in (normalized.notes if normalized else ())]
    skipped_issues = result.skipped
    if skipped_issues:
        notes.append(f"{len(skipped_issues)} offer(s) skipped by the scraper: {by_reason(skipped_issues)}")
    offer_unknown = {
        clean(k, MAX_NAME_CHARS): v for k, v in (normalized.unknown_gpus if normalized else {}).items()
    }
    catalog_unknown = {clean(k, MAX_NAME_CHARS) for k in scraped.catalog_unknown}
    unknown = tuple(sorted(catalog_unknown | set(offer_unknown)))
    if unknown:
        named = [
            f"{name} ({offer_unknown[name]} offer(s) not stored)"
            if name in offer_unknown
            else f"{name} (GPU list)"
            for name in unknown
        ]
        notes.append(
            f"unknown GPUs: {listed(named)}; a real card needs its name among the aliases in planner/data/gpus.csv"
        )
    if result.status == RunStatus.FAILED:
        lost = [
            i.message
            for i in result.issues
            if i.kind == "region_failed" and i.message not in (result.error or "")
        ]
        if lost:  # the error names the whole run; the notes say what each region or zone answered
            notes.append(f"{len(lost)} region/zone call(s) failed: {listed(lost)}")
        return Assessment(0, (), tuple(notes), unknown, 0, result.error or "failed")
    assert normalized is not None
    if normalized.rejected:
        notes.append(f"{len(normalized.rejected)} price(s) refused: {listed(list(normalized.rejected))}")
    skipped = len(skipped_issues) + sum(normalized.unknown_gpus.values()) + len(normalized.rejected)
    offers_seen = len(result.offers)
    if not offers_seen and last_good is not None:
        quiet = (
            f"{name} returned no offers, where its last good refresh ({last_good.started_at:%Y-%m-%d}) "
            f"returned {last_good.offers_seen}: its pages or API have probably changed; the last good "
            "prices stay in use"
        )
        return Assessment(0, (), tuple(notes), unknown, 0, quiet)
    if offers_seen and not normalized.offers:
        garbage = f"{name}: none of the {offers_seen} offers could be stored (unknown GPUs or refused prices: see notes)"
        return Assessment(offers_seen, (), tuple(notes), unknown, skipped, garbage)
    return Assessment(offers_seen, normalized.offers, tuple(notes), unknown, skipped)


def flagged_moves(
    name: str, changes: Sequence[store.PriceChange], stored: int
) -> tuple[tuple[str, ...], str | None]:
    """The stored prices that moved more than tenfold, and the refusal when so many moved at once that
    it must be a unit or format change (pure)."""
    flagged = tuple(
        f"{'/'.join(c.instance[1:])} {c.billing}: {c.before} on {c.before_day} -> {c.after}"
        for c in changes
        if is_suspicious_move(c.before, c.after)
    )
    if len(flagged) >= MASS_MOVE_MIN and len(flagged) > MASS_MOVE_SHARE * stored:
        return flagged, (
            f"{name}: {len(flagged)} of {stored} prices moved more than tenfold at once (e.g. "
            f"{flagged[0]}): a unit or format change, not a price change; nothing stored, "
            "the last good prices stay in use"
        )
    return flagged, None


def finish(engine: Engine, job: ScrapeJob, scraped: Scraped, secrets: tuple[str, ...]) -> ProviderOutcome:
    """Store one provider's result in one transaction (or record why nothing was stored)."""
    last_good = _last_good_run(engine, job) if returned_nothing(scraped) else None
    judged = assess(job.name, scraped, last_good)
    notes, unknown, skipped = list(judged.notes), judged.unknown_gpus, judged.skipped
    if judged.failure is not None:
        return fail(
            engine,
            job,
            judged.failure,
            offers=judged.offers_seen,
            notes=notes,
            unknown_gpus=unknown,
            skipped=skipped,
        )
    result = scraped.result
    try:
        with store.writing(engine) as conn:
            kept, conflicts = _without_conflicts(conn, judged.offers)
            ids = store.upsert_instances(conn, [_instance_row(o) for o in kept])
            observed_at = job.observed_at or store.utcnow()
            counts = store.insert_prices(conn, [_price_row(o, observed_at) for o in kept], ids, job.run_id)
            stock = [_availability_row(o, observed_at) for o in kept if o.has_availability]
            stocked = store.insert_availability(conn, stock, ids, job.run_id)
            seen = {(ids[o.instance_key], o.billing): o.cny_per_gpu_hour for o in kept}
            run_offers.record(conn, job.name, job.run_id, seen)
            if stocked:
                notes.append(f"stock recorded for {stocked} offer(s)")
            if conflicts:
                notes.append(
                    f"{len(conflicts)} offer(s) not stored, their instance is recorded with "
                    f"another GPU: {listed(conflicts)}"
                )
            flagged, refused = flagged_moves(job.name, counts.changes, counts.stored)
            if refused:
                raise _Refused(refused)
            if flagged:
                notes.append(
                    f"{len(flagged)} price(s) moved more than tenfold (stored; check them): "
                    + listed(list(flagged))
                )
            skipped += len(conflicts)
            error = clean(scrub(result.error, secrets), MAX_TEXT_CHARS) if result.error else None
            notes = [clean(scrub(n, secrets), MAX_TEXT_CHARS, keep_lines=True) for n in notes]
            store.finish_run(
                conn,
                job.run_id,
                result.status,
                offers_seen=judged.offers_seen,
                prices_stored=counts.stored,
                prices_changed=counts.changed,
                unknown_gpus=", ".join(unknown) or None,
                error=error,
                mode=job.mode,
                offers_skipped=skipped,
                prices_flagged=len(flagged),
                notes="\n".join(notes) or None,
            )
    except _Refused as refused_run:
        return fail(
            engine,
            job,
            str(refused_run),
            offers=judged.offers_seen,
            notes=notes,
            unknown_gpus=unknown,
            skipped=skipped,
        )
    except sa_exc.SQLAlchemyError as err:
        reason = first_line(err)
        return fail(
            engine,
            job,
            f"database error, nothing stored: {reason}",
            offers=judged.offers_seen,
            notes=notes,
            unknown_gpus=unknown,
            skipped=skipped,
        )
    return ProviderOutcome(
        provider=job.name,
        status=result.status,
        offers=judged.offers_seen,
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


def _last_good_run(engine: Engine, job: ScrapeJob) -> LastGoodRun | None:
    """The provider's last run in the same mode that stored offers (None when there is none, or the
    database cannot say)."""
    from db.schema import scrape_runs as runs

    mode = job.mode.split("/")[0]
    query = (
        select(runs.c.offers_seen, runs.c.started_at)
        .where(
            runs.c.provider == job.name,
            runs.c.kind == "refresh",
            runs.c.status.in_(STORED_RUN_STATUSES),
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
    return None if last is None else LastGoodRun(last[0], last[1])


def _without_conflicts(
    conn: Connection, offers: Sequence[NormalizedOffer]
) -> tuple[list[NormalizedOffer], list[str]]:
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


def _instance_row(offer: NormalizedOffer) -> store.InstanceRow:
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


def _price_row(offer: NormalizedOffer, observed_at: dt.datetime) -> store.PriceRow:
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


def _availability_row(offer: NormalizedOffer, observed_at: dt.datetime) -> store.AvailabilityRow:
    return store.AvailabilityRow(
        instance=offer.instance_key,
        billing=offer.billing,
        observed_at=observed_at,
        stock_status=offer.stock_status,
        idle_gpus=offer.idle_gpus,
        total_gpus=offer.total_gpus,
        orderable_gpus=offer.orderable_gpus,
        max_idle_gpus_per_machine=offer.max_idle_gpus_per_machine,
        max_orderable_gpus_per_machine=offer.max_orderable_gpus_per_machine,
    )
