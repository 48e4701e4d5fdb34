"""``check_alerts``: judge every rule on the current offers, remember what holds, tell the channels.

Per rule and offer, ``alert_state`` keeps a row while the condition holds: an offer fires when its row
is created (the condition started to hold) and fires again only after the row went away (it stopped
holding). The rows, with the channels that still owe the message (``pending``) and what fired
(``detail``), are committed before anything is sent; a channel's success then clears its name in one
transaction. A channel that fails, or a process killed while sending, leaves the names pending, and
the next check sends those alerts again (marked as late): an alert may reach a group twice after a
crash, never zero times. Each check sends at most one message per channel, listing every alert that
fired, and writes one ``scrape_runs`` row (provider ``alerts``, kind ``alert``) per channel it tried,
which ``planner runs`` shows.

State that cannot be read heals (``heal_state``): a dropped ``alert_state`` table is created again and
a row whose JSON cannot be read is dropped, each with a warning in the result. What holds then fires
again, as after a first check: an alert may repeat, but alerts never stop for good.
"""

from __future__ import annotations

import datetime as dt
import difflib
import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import delete, insert, inspect, select, update
from sqlalchemy.engine import Connection, Engine

from db import store
from db.schema import alert_state
from planner.alerts.channels import CHANNELS, deliver
from planner.alerts.channels.base import Channel, Delivery, Post
from planner.alerts.conditions import reason
from planner.alerts.message import Firing, render
from planner.alerts.offers import current_offers
from planner.alerts.rules import Rule, load_channels, load_rules
from planner.config import Config, language
from planner.errors import PlannerError, UnknownNameError, UsageError
from planner.output import to_jsonable
from planner.pricing.freshness import REFRESH_HINT
from vocab import RunStatus
from vocab.words import ENGLISH, say

RUN_PROVIDER = "alerts"
RUN_KIND = "alert"


@dataclass(frozen=True)
class Fired:
    """One offer that started to meet one rule at this check."""

    rule: str
    description: str
    offer: dict[str, Any]  # AlertOffer.to_dict() plus "reason"
    channels: tuple[str, ...]


@dataclass
class CheckResult:
    fired: list[Fired] = field(default_factory=list)
    holding: dict[str, int] = field(default_factory=dict)  # rule -> offers meeting it now
    stopped: int = 0  # offers that stopped meeting their rule
    deliveries: list[Delivery] = field(default_factory=list)
    dry_run: bool = False
    note: str | None = None  # why nothing can fire yet (no refreshed or imported prices), else None
    warnings: list[str] = field(default_factory=list)  # state that could not be read, and what was done

    @property
    def failed(self) -> list[Delivery]:
        return [d for d in self.deliveries if not d.ok]

    def to_dict(self) -> dict[str, Any]:
        return {
            "dry_run": self.dry_run,
            "fired": [
                {"rule": f.rule, "description": f.description, "channels": list(f.channels), **f.offer}
                for f in self.fired
            ],
            "holding": self.holding,
            "stopped": self.stopped,
            "deliveries": [d.to_dict() for d in self.deliveries],
            "note": self.note,
            "warnings": self.warnings,
        }


def check_alerts(
    engine: Engine,
    config: Config,
    *,
    dry_run: bool = False,
    env: Mapping[str, str] | None = None,
    clock: Callable[[], float] = time.time,
    sleep: Callable[[float], None] = time.sleep,
    post: Post | None = None,
) -> CheckResult:
    """Evaluate every rule, record what started and stopped holding, and send what is owed.

    ``dry_run`` records and sends nothing. Raises ConfigError for a bad rule; a channel's failure is
    in the result (``deliveries``), never raised. Run it holding the refresh lock, so two checks never
    judge the same change at once.
    """
    channels = load_channels(config)
    rules = load_rules(config, channels)
    result = CheckResult(dry_run=dry_run)
    now = store.utcnow()
    fx = config.section("fx")
    with engine.begin() as conn:
        result.warnings = heal_state(conn, dry_run=dry_run)
        missing = dry_run and not _has_state(conn)
        result.note = nothing_to_judge(conn) if rules else None
        lang = language(config)
        for rule in rules:
            _judge(conn, rule, fx, now, result, dry_run, missing, lang)
        if not dry_run:
            gone = delete(alert_state).where(alert_state.c.rule.not_in([r.name for r in rules]))
            conn.execute(gone)  # a rule removed or renamed: its state goes with it
    if dry_run:
        return result
    _send_pending(engine, config, rules, channels, result, env=env, clock=clock, sleep=sleep, post=post)
    return result


def nothing_to_judge(conn: Connection) -> str | None:
    """One sentence when no refresh or import has stored prices yet: alerts judge those only (the
    bundled snapshot's prices are no news), so none can fire; None otherwise."""
    from db.queries import has_gathered_prices, has_prices

    if has_gathered_prices(conn):
        return None
    held = "only the bundled snapshot's prices" if has_prices(conn) else "no prices"
    return (
        f"No alert can fire yet: the database holds {held}, and alerts judge only refreshed or "
        f"imported prices; {REFRESH_HINT}."
    )


def heal_state(conn: Connection, *, dry_run: bool = False) -> list[str]:
    """Make ``alert_state`` readable again, one warning per repair: a missing table is created (a dry
    run only says it would be), a row whose ``pending`` is not a JSON list of channel names or whose
    ``detail`` is not a JSON object is dropped (a dry run leaves it). Its offer is then judged afresh."""
    if not _has_state(conn):
        if dry_run:
            return ["the alert state table is missing: the next check creates it again (alerts may repeat)"]
        alert_state.create(conn)
        return ["the alert state table was missing: created again; offers that meet a rule now fire again"]
    rows = conn.execute(
        select(
            alert_state.c.id,
            alert_state.c.rule,
            alert_state.c.offer_key,
            alert_state.c.pending,
            alert_state.c.detail,
        )
    ).all()
    bad = [row for row in rows if not _readable(row.pending, row.detail)]
    if bad and not dry_run:
        conn.execute(delete(alert_state).where(alert_state.c.id.in_([row.id for row in bad])))
    done = "the next check drops it" if dry_run else "dropped"
    done += "; its offer is judged afresh (an alert may repeat)"
    return [
        f"the alert state of rule {row.rule!r} for {row.offer_key} could not be read: {done}" for row in bad
    ]


def _has_state(conn: Connection) -> bool:
    return inspect(conn).has_table(alert_state.name)


def _readable(pending: Any, detail: Any) -> bool:
    try:
        channels, offer = json.loads(pending), json.loads(detail)
    except (TypeError, ValueError):
        return False
    return (
        isinstance(channels, list) and all(isinstance(c, str) for c in channels) and isinstance(offer, dict)
    )


def _judge(
    conn: Connection,
    rule: Rule,
    fx: Mapping[str, object],
    now: dt.datetime,
    result: CheckResult,
    dry_run: bool,
    missing: bool = False,
    lang: str = ENGLISH,
) -> None:
    matches = {}
    for offer in current_offers(conn, rule, fx):
        why = reason(rule, offer)
        if why is not None:
            matches[offer.key] = {**offer.to_dict(), "reason": why}
            if lang != ENGLISH:  # the message speaks the team's language; JSON and state keep English
                matches[offer.key]["said"] = {
                    "lang": lang,
                    "reason": reason(rule, offer, lang),
                    "description": rule.describe(lang),
                    "stock": offer.stock_text(lang),
                }
    result.holding[rule.name] = len(matches)
    rows = (
        {}
        if missing
        else {
            r.offer_key: r
            for r in conn.execute(
                select(alert_state.c.offer_key, alert_state.c.holding, alert_state.c.pending).where(
                    alert_state.c.rule == rule.name
                )
            )
        }
    )
    for key, detail in matches.items():
        row = rows.get(key)
        if row is not None and row.holding:
            continue  # still holding: already told
        result.fired.append(Fired(rule.name, rule.describe(), detail, rule.channels))
        if dry_run:
            continue
        values = {
            "holding": True,
            "holding_since": now,
            "fired_at": now,
            "pending": json.dumps(sorted(set(rule.channels) | set(_pending(row)))),
            "detail": json.dumps(
                to_jsonable({**detail, "description": rule.describe(), "fired_at": now}), ensure_ascii=False
            ),
        }
        if row is None:
            conn.execute(insert(alert_state).values(rule=rule.name, offer_key=key, **values))
        else:
            conn.execute(_where(update(alert_state), rule.name, key).values(**values))
    for key, row in rows.items():
        if key in matches or not row.holding:
            continue
        result.stopped += 1
        if dry_run:
            continue
        if _pending(row):  # stopped holding while a channel still owes the news: keep it until sent
            conn.execute(_where(update(alert_state), rule.name, key).values(holding=False))
        else:
            conn.execute(_where(delete(alert_state), rule.name, key))


def _send_pending(
    engine: Engine,
    config: Config,
    rules: Sequence[Rule],
    channels: Mapping[str, Channel],
    result: CheckResult,
    **send_kw: Any,
) -> None:
    owed: dict[str, list[tuple[str, str, dict[str, Any]]]] = {}
    with engine.connect() as conn:
        rows = conn.execute(
            select(alert_state.c.rule, alert_state.c.offer_key, alert_state.c.pending, alert_state.c.detail)
            .where(alert_state.c.pending != "[]")
            .order_by(alert_state.c.rule, alert_state.c.offer_key)
        ).all()
    fired_now = {(f.rule, f.offer["key"]) for f in result.fired}
    lang = language(config)
    for rule_name, key, pending, detail in rows:
        offer = json.loads(detail)
        if (rule_name, key) not in fired_now:
            late = offer.get("fired_at") or say("alert.earlier", ENGLISH)
            offer["reason"] = say("alert.late", ENGLISH, reason=offer.get("reason", ""), when=late)
            said = offer.get("said")
            if isinstance(said, dict) and said.get("lang") == lang:
                when = offer.get("fired_at") or say("alert.earlier", lang)
                said["reason"] = say("alert.late", lang, reason=said.get("reason") or "", when=when)
        for name in json.loads(pending):
            owed.setdefault(name, []).append((rule_name, key, offer))
    order = {r.name: i for i, r in enumerate(rules)}
    for name, items in owed.items():
        channel = channels.get(name)
        if channel is None:  # the channel left the config: nobody to tell
            _clear(engine, name, items)
            continue
        firings = _firings(items, order)
        title, text = render(firings, CHANNELS[channel.kind].max_bytes, lang)
        delivery = deliver(channel, title, text, config=config, alerts=len(items), **send_kw)
        result.deliveries.append(delivery)
        with engine.begin() as conn:
            if delivery.ok:
                _clear_in(conn, name, items)
            record_run(conn, delivery)


def _firings(items: Sequence[tuple[str, str, dict[str, Any]]], order: Mapping[str, int]) -> list[Firing]:
    by_rule: dict[str, list[dict[str, Any]]] = {}
    for rule_name, _key, offer in items:
        by_rule.setdefault(rule_name, []).append(offer)
    names = sorted(by_rule, key=lambda n: order.get(n, len(order)))
    return [Firing(n, str(by_rule[n][0].get("description", n)), tuple(by_rule[n])) for n in names]


def _clear(engine: Engine, channel: str, items: Sequence[tuple[str, str, dict[str, Any]]]) -> None:
    with engine.begin() as conn:
        _clear_in(conn, channel, items)


def _clear_in(conn: Connection, channel: str, items: Sequence[tuple[str, str, dict[str, Any]]]) -> None:
    """Take ``channel`` off the pending list of each item; drop rows no longer holding nor owed."""
    for rule_name, key, _offer in items:
        row = conn.execute(
            _where(select(alert_state.c.pending, alert_state.c.holding), rule_name, key)
        ).first()
        if row is None:
            continue
        left = [c for c in json.loads(row.pending) if c != channel]
        if not left and not row.holding:
            conn.execute(_where(delete(alert_state), rule_name, key))
        else:
            conn.execute(_where(update(alert_state), rule_name, key).values(pending=json.dumps(left)))


def record_run(conn: Connection, delivery: Delivery, what: str = "alert(s)") -> None:
    """One ``scrape_runs`` row (provider ``alerts``, kind ``alert``) for one message to one channel."""
    run_id = store.start_run(
        conn, RUN_PROVIDER, RUN_KIND, source=f"channel {delivery.channel} ({delivery.kind})"
    )
    count = f"{delivery.alerts} {what}" if what == "alert(s)" else what
    note = f"{'sent' if delivery.ok else 'not sent'}: {count} in {delivery.attempts} attempt(s)"
    store.finish_run(
        conn,
        run_id,
        RunStatus.OK if delivery.ok else RunStatus.FAILED,
        offers_seen=delivery.alerts,
        error=None if delivery.ok else f"{delivery.channel}: {delivery.error}",
        notes=note + (f"; {delivery.error}" if delivery.ok and delivery.error else ""),
    )


def _pending(row: Any) -> list[str]:
    return list(json.loads(row.pending)) if row is not None else []


def _where(statement: Any, rule: str, key: str) -> Any:
    return statement.where(alert_state.c.rule == rule, alert_state.c.offer_key == key)


def after_refresh(
    engine: Engine, config: Config, say: Callable[[str], None], warn: Callable[[str], None] | None = None
) -> CheckResult | None:
    """Check the alerts after a refresh (the caller holds the refresh lock). Never raises: a bad rule or
    a failing channel goes to ``warn`` (default ``say``) and must not cost the refresh its exit code."""
    warn = warn or say
    if not config.data.get("alerts"):
        return None
    try:
        result = check_alerts(engine, config)
    except PlannerError as err:
        warn(f"alerts: not checked: {err.message}" + (f" ({err.hint})" if err.hint else ""))
        return None
    except Exception as err:  # a bug of ours must not cost the refresh
        warn(f"alerts: not checked: unexpected {type(err).__name__}")
        return None
    for line in result.warnings:
        warn(f"alerts: {line}")
    lines = summary_lines(result)
    say(f"alerts: {lines[0]}")
    if result.note:
        say(f"alerts: {result.note}")
    for delivery, line in zip(result.deliveries, lines[1:], strict=True):
        (say if delivery.ok else warn)(f"alerts: {line}")
    return result


def summary_lines(result: CheckResult) -> list[str]:
    """``2 fired (cheap-h800, h20-idle)``, then one line per channel: sent, or failed and why."""
    names = sorted({f.rule for f in result.fired})
    lines = [f"{len(result.fired)} fired" + (f" ({', '.join(names)})" if names else "")]
    for d in result.deliveries:
        if d.ok:
            lines.append(f"sent {d.alerts} alert(s) to {d.channel} ({d.kind})")
        else:
            lines.append(
                f"{d.channel} ({d.kind}) failed: {d.error}; its alerts stay pending for the next check"
            )
    return lines


@dataclass(frozen=True)
class RuleState:
    """What the database remembers of one rule: offers holding now, messages owed, the last firing."""

    holding: int = 0
    pending: int = 0
    last_fired_at: dt.datetime | None = None


def rule_states(engine: Engine) -> dict[str, RuleState]:
    """Per rule, what ``alert_state`` remembers; nothing when the table is missing (a check rebuilds it)."""
    with engine.connect() as conn:
        if not _has_state(conn):
            return {}
        rows = conn.execute(
            select(alert_state.c.rule, alert_state.c.holding, alert_state.c.pending, alert_state.c.fired_at)
        ).all()
    out: dict[str, RuleState] = {}
    for rule, holding, pending, fired_at in rows:
        old = out.get(rule, RuleState())
        last = max([t for t in (old.last_fired_at, fired_at) if t is not None], default=None)
        out[rule] = RuleState(old.holding + int(bool(holding)), old.pending + int(pending != "[]"), last)
    return out


def send_test(
    engine: Engine, config: Config, channel_name: str, *, env: Mapping[str, str] | None = None, **send_kw: Any
) -> Delivery:
    """Send a short test message to one channel and record it in ``scrape_runs``; UnknownNameError for
    a channel that is not configured."""
    channels = load_channels(config)
    channel = channels.get(channel_name)
    if channel is None:
        if not channels:
            raise UsageError(
                f"unknown channel {channel_name!r}: no channels are configured",
                "add a [channels.NAME] section to your config (see config.toml)",
            )
        near = difflib.get_close_matches(channel_name, list(channels))
        raise UnknownNameError("channel", channel_name, near or sorted(channels))
    title = "planner: test message"
    text = (
        f"### {title}\n\nThis channel ({channel.name}, {channel.kind}) will receive planner's GPU alerts"
        " and, if listed in [schedule] report_channels, the nightly summary.\n"
    )
    delivery = deliver(channel, title, text, config=config, env=env, **send_kw)
    with engine.begin() as conn:
        record_run(conn, delivery)
    return delivery
