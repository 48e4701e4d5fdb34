"""Every provider against every way its server can fail, on SQLite and PostgreSQL.

Network faults go through a real loopback HTTP server (``FaultServer``) that serves the recorded
replay (``tests/fixtures/raw``) the way the provider would, reached through ``[providers.<name>]
base_url``, and breaks it: timeouts, connections reset mid-body, 429 with Retry-After, 5xx bursts,
redirects to a login page, truncated, empty, non-JSON and HTML bodies, and a gzip bomb (an answer
that decodes to more than the 64 MB a response may be). Payload faults edit the
recorded answers: a price field renamed, the list of offers emptied, prices as strings, negative,
absurd, or a hundred times too high.

What must hold every time:

- a transient fault (one timeout, one reset, a 429 with Retry-After, a burst of 5xx) is retried and
  the run stores exactly what a clean run stores;
- a lasting fault or a bad payload ends in a ``failed`` run whose error is one readable line naming
  the provider and the fault; nothing is stored for that provider today, and yesterday's prices are
  still there and still the latest (nothing is lost).

``test_refresh_failures.py`` covers connection refused and a few single cases; this file is the matrix.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func, select

from db.schema import instances, prices, scrape_runs
from planner.ingest.refresh import RefreshSummary
from tests.helpers.db_edits import age_everything
from tests.helpers.replay import EXPECTED_STORED, RAW, make_config, outcome, recordings, refresh, replay_copy
from tests.helpers.servers import READ_TIMEOUT_S, FaultServer

PROVIDERS = list(EXPECTED_STORED)
# AutoDL and the marketplaces were recorded in account mode.
TOKEN_ENV = {
    "AUTODL_TOKEN": "replayed-token",
    "PPIO_API_KEY": "replayed-key",
    "COMPSHARE_PUBLIC_KEY": "replayed-public",
    "COMPSHARE_PRIVATE_KEY": "replayed-private",
}


def live_config(
    tmp_path: Path, provider: str, base_url: str, retries: int, read_timeout_s: float = READ_TIMEOUT_S
):
    config = make_config(tmp_path, providers={provider: {"base_url": base_url}})
    config.data["http"].update(
        retries=retries, backoff_s=0.0, read_timeout_s=read_timeout_s, connect_timeout_s=1
    )
    return config


# A server that never answers needs no margin: the client may give up on it at once.
NEVER_ANSWERED_TIMEOUT_S = 0.05


def stored_rows(engine, provider: str) -> set[tuple]:
    """Every stored price of ``provider`` as (region, instance, billing, day, price)."""
    with engine.connect() as conn:
        rows = conn.execute(
            select(
                instances.c.region,
                instances.c.instance_type,
                prices.c.billing,
                prices.c.observed_on,
                prices.c.price,
            )
            .select_from(prices.join(instances, instances.c.id == prices.c.instance_id))
            .where(instances.c.provider == provider)
        )
        return {tuple(r) for r in rows}


@contextlib.contextmanager
def yesterday_then(engine, tmp_path: Path, provider: str) -> Iterator[set[tuple]]:
    """Yesterday's good refresh of ``provider``; after the block, those prices must all be there."""
    assert refresh(engine, tmp_path, from_raw=RAW, providers=[provider]).exit_code == 0
    age_everything(engine)
    before = stored_rows(engine, provider)
    assert len(before) == EXPECTED_STORED[provider]
    yield before
    assert before <= stored_rows(engine, provider), "a price stored before the fault is gone"


def assert_failed_readably(
    summary: RefreshSummary, engine, provider: str, before: set[tuple], pattern: str
) -> None:
    failed = outcome(summary, provider)
    error = failed.error or ""
    assert failed.status == "failed" and summary.exit_code == 1, (failed.status, error)
    assert re.search(pattern, error), error
    assert "\n" not in error and "Traceback" not in error and len(error) < 1000, error
    assert provider in error.lower(), error
    assert (failed.stored, failed.changed) == (0, 0)
    assert stored_rows(engine, provider) == before  # nothing of tonight's answers was stored
    with engine.connect() as conn:
        run = conn.execute(select(scrape_runs).where(scrape_runs.c.id == failed.run_id)).mappings().one()
        per_run = conn.execute(select(func.count()).where(prices.c.run_id == failed.run_id)).scalar_one()
    assert (run["status"], run["prices_stored"], per_run) == ("failed", 0, 0)
    assert run["error"] == error and run["finished_at"] is not None


# --- network faults ---------------------------------------------------------------------------------

# A network fault never reaches the database, so the matrix runs on SQLite in the fast group and on
# PostgreSQL in the slow one.
BOTH_BACKENDS_SLOW_PG = pytest.mark.parametrize(
    "db_url", ["sqlite", pytest.param("postgresql", marks=pytest.mark.slow)], indirect=True
)


def matrix(kinds: list[str], slow_only: tuple[str, ...] = ()) -> list[Any]:
    """(provider, kind) for every provider and kind; the fast group keeps one provider per kind (taken
    in turn, so each provider is in it) except the ``slow_only`` kinds, which wait on the wall clock;
    the slow group runs the whole matrix."""
    cases = []
    for i, kind in enumerate(kinds):
        for provider in PROVIDERS:
            fast = provider == PROVIDERS[i % len(PROVIDERS)] and kind not in slow_only
            cases.append(pytest.param(provider, kind, marks=() if fast else pytest.mark.slow))
    return cases


@pytest.fixture
def slept(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The pauses the HTTP clients of a refresh asked for, recorded instead of slept (a fake sleeper:
    a Retry-After costs no wall-clock time)."""
    from scrapers import registry

    pauses: list[float] = []
    real = registry.make_client
    monkeypatch.setattr(registry, "make_client", lambda *args, **kw: real(*args, **kw, sleep=pauses.append))
    return pauses


# fault -> requests it hits, Retry-After, what the error says when it never stops
TRANSIENT = {
    "timeout": 1,  # one answer never comes; the retry gets it
    "reset": 1,  # the connection is reset half-way through the body
    "429": 1,  # "Too Many Requests, retry after 1 s"
    "503": 2,  # a burst of two 503s
}
LASTING = {
    # The root cause by name (scrapers.http.network_cause), and the loopback mirror actually asked.
    "timeout": r"127\.0\.0\.1:\d+/\S* failed after 2 attempts: timeout: connected, but no answer",
    "reset": r"127\.0\.0\.1:\d+/\S* failed after 2 attempts: reset: the connection was closed",
    "429": r"returned HTTP 429 after 2 attempts",
    "500": r"returned HTTP 500 after 2 attempts",
    "redirect": r"not (return )?JSON",  # a login page, reached by following the redirect
    "truncated": r"not (return )?JSON",
    "text": r"not (return )?JSON",
    "html": r"not (return )?JSON",
    "empty": r"not (return )?JSON",
    "gzipbomb": r"answered more than 64 MB \(decoded\): refused",  # ~130 KB on the wire, 128 MB decoded
}


@BOTH_BACKENDS_SLOW_PG
# A timeout that is then answered needs a read timeout with a margin for a loaded machine: slow group.
@pytest.mark.parametrize(("provider", "fault"), matrix(sorted(TRANSIENT), slow_only=("timeout",)))
def test_a_transient_network_fault_is_retried_and_nothing_is_lost(engine, tmp_path, slept, provider, fault):
    with yesterday_then(engine, tmp_path, provider) as before:
        retry_after = "1" if fault == "429" else "0"
        with FaultServer(provider, fault, first=TRANSIENT[fault], retry_after=retry_after) as server:
            config = live_config(tmp_path, provider, server.base_url, retries=2)
            summary = refresh(engine, tmp_path, config, providers=[provider], env=TOKEN_ENV)
        result = outcome(summary, provider)
        # Yesterday's prices seen again: each confirms its level (prices are levels), none is lost.
        assert (result.status, result.stored + result.already_present) == ("ok", EXPECTED_STORED[provider]), (
            result.error
        )
        assert len(stored_rows(engine, provider)) == len(before) + result.stored
        faulted = [entry for entry in server.log if entry[3] != "answer"]
        assert len(faulted) == TRANSIENT[fault]
        retried = [e for e in server.log if e[1:3] == faulted[0][1:3] and e[3] == "answer"]
        assert retried, "the faulted request was never asked again"
        if fault == "429":
            assert 1.0 in slept  # Retry-After: 1 was honoured (by the fake sleeper: no second lost)


@BOTH_BACKENDS_SLOW_PG
@pytest.mark.parametrize(("provider", "fault"), matrix(sorted(LASTING)))
def test_a_lasting_network_fault_fails_the_run_readably_and_keeps_the_last_good_prices(
    engine, tmp_path, provider, fault
):
    with yesterday_then(engine, tmp_path, provider) as before:
        with FaultServer(provider, fault) as server:
            timeout_s = NEVER_ANSWERED_TIMEOUT_S if fault == "timeout" else READ_TIMEOUT_S
            config = live_config(tmp_path, provider, server.base_url, retries=1, read_timeout_s=timeout_s)
            summary = refresh(engine, tmp_path, config, providers=[provider], env=TOKEN_ENV)
        assert_failed_readably(summary, engine, provider, before, LASTING[fault])


# --- payload faults -------------------------------------------------------------------------------

# provider -> (the recorded answers carrying prices, the price fields, the list of offers)
PRICED = {
    "aliyun": ("instancePrice.json", re.compile(r"^price$"), "pricingInfo"),
    "tencent": ("/cgi/api", re.compile(r"^(UnitPrice|OriginalPrice|DiscountPrice)"), "InstanceTypeQuotaSet"),
    "volcengine": ("trade/price", re.compile(r"^Price$"), "PriceInfoList"),
    "autodl": ("machine/search", re.compile(r"^(payg_price|current_price)$"), "list"),
    "ppio": ("gpus/v2/products", re.compile(r"^(final_price|base_price)$"), "data"),
    "compshare": ("api.compshare.cn", re.compile(r"^(Instance|OriginalPrice)$"), "AvailableInstanceTypes"),
}


def _walk(node: Any, visit: Callable[[dict], None]) -> None:
    if isinstance(node, dict):
        visit(node)
        for value in list(node.values()):
            _walk(value, visit)
    elif isinstance(node, list):
        for value in node:
            _walk(value, visit)


def _prices(transform: Callable[[Any], Any]) -> Callable[[str, Any], None]:
    def mutate(provider: str, doc: Any) -> None:
        field = PRICED[provider][1]

        def visit(node: dict) -> None:
            for key, value in list(node.items()):
                number = not isinstance(value, bool) and isinstance(value, int | float | str)
                if field.search(key) and number and float(value) != 0:
                    node[key] = transform(value)

        _walk(doc, visit)

    return mutate


def _rename_price(provider: str, doc: Any) -> None:
    field = PRICED[provider][1]

    def visit(node: dict) -> None:
        for key in [k for k in node if field.search(k)]:
            node[key + "_v2"] = node.pop(key)

    _walk(doc, visit)


def _empty_list(provider: str, doc: Any) -> None:
    name = PRICED[provider][2]

    def visit(node: dict) -> None:
        if name in node:
            node[name] = type(node[name])()
        if "result_total" in node:
            node["result_total"] = 0

    _walk(doc, visit)


def _same_type(old: Any, number: float) -> Any:
    if isinstance(old, str):
        return f"{number:.4f}"
    return int(number) if isinstance(old, int) else number


PAYLOADS: dict[str, Callable[[str, Any], None]] = {
    "price field renamed": _rename_price,
    "offer list emptied": _empty_list,
    "prices as numeric strings": _prices(lambda v: str(v)),
    "prices as words": _prices(lambda v: "面议"),  # "price on request"
    "prices negative": _prices(lambda v: _same_type(v, -abs(float(v)))),
    "prices null": _prices(lambda v: None),
    "prices absurd (x1e6)": _prices(lambda v: _same_type(v, float(v) * 1e6)),
    "prices x100 (a unit change)": _prices(lambda v: _same_type(v, float(v) * 100)),
}
# Aliyun's price file and Volcengine's calculator state prices as strings: for them that is no fault.
# Tencent too: ItemPrice figures arrive as strings ("120.00") in some official examples (issue 14).
STRINGS_ARE_NATIVE = {"aliyun", "tencent", "volcengine"}


def break_payload(folder: Path, provider: str, mutation: str) -> None:
    for body in recordings(folder, provider, PRICED[provider][0]):
        doc = json.loads(body.read_bytes())
        PAYLOADS[mutation](provider, doc)
        body.write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")


@pytest.mark.parametrize(("provider", "mutation"), matrix(list(PAYLOADS)))
def test_a_bad_payload_stores_nothing_and_fails_readably(engine, tmp_path, provider, mutation):
    with yesterday_then(engine, tmp_path, provider) as before:
        folder = replay_copy(tmp_path)
        break_payload(folder, provider, mutation)
        summary = refresh(engine, tmp_path, from_raw=folder, providers=[provider])
        if mutation == "prices as numeric strings" and provider in STRINGS_ARE_NATIVE:
            result = outcome(summary, provider)
            assert (result.status, result.stored + result.already_present) == (
                "ok",
                EXPECTED_STORED[provider],
            )
            return
        pattern = {
            "offer list emptied": r"returned no offers, where its last good refresh \(\d{4}-\d\d-\d\d\) returned \d+",
            "prices x100 (a unit change)": r"moved more than tenfold at once|absurd",
        }.get(mutation, r"\w")
        assert_failed_readably(summary, engine, provider, before, pattern)


def test_the_fault_server_serves_a_clean_night_like_the_replay(engine, tmp_path):
    """The real part behind the matrix: all four providers over loopback HTTP store what the replay does."""
    servers = [FaultServer(p) for p in PROVIDERS]
    with contextlib.ExitStack() as stack:
        for server in servers:
            stack.enter_context(server)
        config = make_config(tmp_path, providers={s.provider: {"base_url": s.base_url} for s in servers})
        summary = refresh(engine, tmp_path, config, env=TOKEN_ENV)
    assert {o.provider: (o.status, o.stored) for o in summary.outcomes} == {
        p: ("ok", n) for p, n in EXPECTED_STORED.items()
    }
    assert all(e[3] == "answer" for s in servers for e in s.log)
    assert sum(len(s.log) for s in servers) == sum(len(list((RAW / p).glob("*.json"))) for p in PROVIDERS)
