"""The tables, as SQLAlchemy Core ``Table`` models.

Core tables rather than ORM classes: the read path (``planner quote``) is measured against a floor of
"import SQLAlchemy and run one indexed query", and ``sqlalchemy.orm`` alone costs more than that
budget allows. Alembic migrations (``db/migrations``) are the only way the schema changes; a test
checks that a migrated database matches these definitions exactly.

Price history records changes, not sightings: a row is one price level of an instance and billing mode,
from when it was first seen (``observed_at``) to when it was last confirmed (``confirmed_at``, since
0007). At most one row per instance, billing mode and UTC day (``uq_prices_instance_billing_day``): a
refresh that sees the day's price again confirms it, one that sees another price on the same day
replaces it (the run's own listing in ``run_offers`` keeps what each run saw). The same unique
index serves the hot query "latest price per instance and billing mode"; ``ix_instances_gpu_model``
serves "everything for one GPU model".

``availability`` holds what a provider says about stock at each refresh (Tencent/Aliyun sold out,
AutoDL idle and total GPUs, and since 0005 the most idle on any one machine), one row per run, instance
and billing mode. It is a table of its own, not columns on ``prices``, because stock changes by the hour
while a price is kept once a day: a second refresh on the same day adds no price but does record how
many GPUs are idle now.

``alert_state`` (since 0004) remembers which offers hold each alert rule's condition, so an alert fires
once when its condition starts to hold and again only after it stopped, and which channels still owe
the message (``pending``): written before anything is sent, so a failed or killed channel loses nothing.

``run_offers`` (since 0006) lists the offers (instance and billing mode) each refresh run listed, kept
for a provider's last runs only (``db.run_offers``). ``prices`` cannot say it: a second refresh on the
same day stores no price, and a replayed recording's prices carry their recorded time. Alerts compare
the latest run with the one before on it ("new offers").
"""

from __future__ import annotations

from sqlalchemy import (
    Boolean,
    Column,
    Date,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    Numeric,
    PrimaryKeyConstraint,
    String,
    Table,
    Text,
    UniqueConstraint,
)

# The Alembic revision these tables correspond to; checked on every start without importing Alembic.
HEAD_REVISION = "0008"

metadata = MetaData()

scrape_runs = Table(
    "scrape_runs",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("provider", String(32), nullable=False),
    # refresh | import | snapshot
    Column("kind", String(16), nullable=False),
    Column("started_at", DateTime, nullable=False),
    Column("finished_at", DateTime),
    # running | ok | partial | failed | skipped
    Column("status", String(16), nullable=False),
    Column("offers_seen", Integer, nullable=False, default=0),
    Column("prices_stored", Integer, nullable=False, default=0),
    Column("prices_changed", Integer, nullable=False, default=0),
    Column("unknown_gpus", Text),
    Column("error", Text),
    Column("source", Text),
    # Since 0002. public | account | replay: what the provider could see on this run.
    Column("mode", String(16)),
    # Offers not stored: skipped by the scraper, unknown GPU, refused price, instance conflict.
    Column("offers_skipped", Integer),
    # Stored prices that moved more than tenfold since the last observation (named in `notes`).
    Column("prices_flagged", Integer),
    # Summary lines: warnings, notes, what was skipped and why, flagged moves. Never a secret.
    Column("notes", Text),
    Index("ix_scrape_runs_provider_started", "provider", "started_at"),
)

instances = Table(
    "instances",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("provider", String(32), nullable=False),
    Column("region", String(64), nullable=False),
    Column("instance_type", String(128), nullable=False),
    Column("gpu_model", String(32), nullable=False),
    Column("gpu_count", Float, nullable=False),
    Column("vcpus", Integer),
    Column("memory_gb", Float),
    # Set when the GPU model is inferred rather than stated by the source.
    Column("gpu_note", Text),
    UniqueConstraint("provider", "region", "instance_type", name="uq_instances_provider_region_type"),
    Index("ix_instances_gpu_model", "gpu_model"),
)

prices = Table(
    "prices",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("instance_id", Integer, ForeignKey("instances.id"), nullable=False),
    Column("billing", String(16), nullable=False),
    # The price of the whole instance for one `unit` of `billing`, in `currency`, as the source quotes it.
    Column("price", Numeric(18, 6), nullable=False),
    Column("currency", String(3), nullable=False),
    Column("unit", String(8), nullable=False),
    # Derived for comparison: price / hours in the unit / GPUs, converted to CNY.
    Column("cny_per_gpu_hour", Numeric(18, 6), nullable=False),
    # Hourly tiers after the first as JSON [[from_hour, price], ...] (Tencent's steps: vocab.TENCENT_TIER_HOURS).
    Column("tiers", Text),
    Column("observed_at", DateTime, nullable=False),
    Column("observed_on", Date, nullable=False),
    Column("run_id", Integer, ForeignKey("scrape_runs.id"), nullable=False),
    Column("source", Text),
    # Since 0002. A marketplace (AutoDL) lists many machines: `price` is the cheapest listing and this
    # the median one, same currency and unit; None elsewhere.
    Column("median_price", Numeric(18, 6)),
    # Since 0007. A row is a price level, not a sighting: `observed_at` is when this price was first seen,
    # `confirmed_at` the last refresh or import that saw the same price (None: never since; the first
    # sighting is the last). Age counts from the last confirmation.
    Column("confirmed_at", DateTime),
    # Since 0007. Set (on an offer's latest row) by an import or the bundled snapshot when the source
    # says the provider no longer lists the offer; a refresh that lists it again clears it. A refresh
    # that does not list it needs no mark: `run_offers` says what each refresh listed (db.catalogue).
    Column("unlisted_at", DateTime),
    UniqueConstraint("instance_id", "billing", "observed_on", name="uq_prices_instance_billing_day"),
    Index("ix_prices_observed_on", "observed_on"),
)

availability = Table(
    "availability",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("instance_id", Integer, ForeignKey("instances.id"), nullable=False),
    Column("billing", String(16), nullable=False),
    Column("run_id", Integer, ForeignKey("scrape_runs.id"), nullable=False),
    Column("observed_at", DateTime, nullable=False),
    Column("observed_on", Date, nullable=False),
    # available | low | sold_out | None (no verdict; scrapers/stock.py maps each provider's words)
    Column("stock_status", String(16)),
    Column("idle_gpus", Integer),
    Column("total_gpus", Integer),
    # Since 0003. GPUs that can be ordered now (AutoDL gpu_order_num); None where the provider does not
    # say. idle_gpus > 0 with orderable_gpus == 0 is "idle but not orderable" (stock_status sold_out).
    Column("orderable_gpus", Integer),
    # Since 0005. A marketplace (AutoDL) sums the counts above over its machines, but a job's GPUs are
    # rented on one machine: the most idle (orderable) GPUs on any one of them. None where not stated
    # (other providers, rows stored before 0005): the rule then judges the sums alone.
    Column("max_idle_gpus_per_machine", Integer),
    Column("max_orderable_gpus_per_machine", Integer),
    # "latest per instance and billing" groups on this index; one row per run.
    UniqueConstraint("instance_id", "billing", "run_id", name="uq_availability_instance_billing_run"),
    # "history for one GPU model over N days" reads this index.
    Index("ix_availability_instance_day", "instance_id", "observed_on"),
)

alert_state = Table(
    "alert_state",
    metadata,
    Column("id", Integer, primary_key=True),
    # The rule's name in the config and the offer it is about ("autodl/west-B/RTX4090-24GB/on_demand").
    Column("rule", String(64), nullable=False),
    Column("offer_key", String(320), nullable=False),
    # False once the condition stopped holding while a channel still owed the message.
    Column("holding", Boolean, nullable=False),
    Column("holding_since", DateTime, nullable=False),
    Column("fired_at", DateTime, nullable=False),
    # JSON list of the channel names that have not yet delivered this firing; [] when all did.
    Column("pending", Text, nullable=False),
    # JSON of the offer and the reason as fired, so a late delivery says what was true then.
    Column("detail", Text, nullable=False),
    UniqueConstraint("rule", "offer_key", name="uq_alert_state_rule_offer"),
)

run_offers = Table(
    "run_offers",
    metadata,
    Column("run_id", Integer, ForeignKey("scrape_runs.id"), nullable=False),
    Column("instance_id", Integer, ForeignKey("instances.id"), nullable=False),
    Column("billing", String(16), nullable=False),
    # Since 0007. The CNY per GPU-hour the run saw (alerts measure a drop run against run).
    Column("cny_per_gpu_hour", Numeric(18, 6)),
    PrimaryKeyConstraint("run_id", "instance_id", "billing", name="pk_run_offers"),
)

# Since 0008. What `planner import --replace` replaced: the whole stored row as it was (its run in
# `replaced_run_id`), one row per correction, written by the run that corrected it (`run_id`), so every
# replaced price stays recoverable (db.bulk.replace_corrections, db.bulk.replaced_prices).
price_corrections = Table(
    "price_corrections",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("price_id", Integer, ForeignKey("prices.id"), nullable=False),
    Column("run_id", Integer, ForeignKey("scrape_runs.id"), nullable=False),
    Column("replaced_run_id", Integer, ForeignKey("scrape_runs.id"), nullable=False),
    Column("instance_id", Integer, ForeignKey("instances.id"), nullable=False),
    Column("billing", String(16), nullable=False),
    Column("observed_on", Date, nullable=False),
    Column("price", Numeric(18, 6), nullable=False),
    Column("currency", String(3), nullable=False),
    Column("unit", String(8), nullable=False),
    Column("cny_per_gpu_hour", Numeric(18, 6), nullable=False),
    Column("tiers", Text),
    Column("observed_at", DateTime, nullable=False),
    Column("source", Text),
    Column("median_price", Numeric(18, 6)),
    Column("confirmed_at", DateTime),
    Column("unlisted_at", DateTime),
    Index("ix_price_corrections_series", "instance_id", "billing", "observed_on"),
    Index("ix_price_corrections_run", "run_id"),
)
