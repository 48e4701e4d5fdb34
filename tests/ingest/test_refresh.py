"""The refresh pipeline end to end: all four providers replayed from tests/fixtures/raw in one run,
then quoted together; isolation, same-day idempotence, flags, conflicts, timeouts, record-then-replay.

Helpers here (names not starting with ``test``) are shared by the other test_refresh*/availability/
history modules.
"""

from __future__ import annotations

import json
import shutil
import threading
import time
from decimal import Decimal

import pytest
import responses
from sqlalchemy import func, select, update

from db import store
from db.schema import availability, instances, prices, run_offers, scrape_runs
from planner.config import load_config
from planner.ingest.refresh import run_refresh
from scrapers.http import HttpPolicy
from tests.helpers.db_checks import stored_by_provider
from tests.helpers.db_edits import age_everything
from tests.helpers.replay import (
    EXPECTED_STORED,
    OFF_BY_DEFAULT,
    RAW,
    make_config,
    outcome,
    refresh,
    replay_copy,
)

# --- the replay of all four providers --------------------------------------------------------------


def test_replay_refreshes_all_four_providers_each_in_its_own_run(engine, tmp_path):
    lines: list[str] = []
    summary = refresh(engine, tmp_path, from_raw=RAW, progress=lines.append)
    assert summary.exit_code == 0
    assert [o.provider for o in summary.outcomes] == list(EXPECTED_STORED)
    assert {o.provider: (o.status, o.stored) for o in summary.outcomes} == {
        p: ("ok", n) for p, n in EXPECTED_STORED.items()
    }
    assert stored_by_provider(engine) == EXPECTED_STORED
    assert outcome(summary, "autodl").mode == "account/replay"  # the manifest says it was recorded so
    assert outcome(summary, "aliyun").mode == "public/replay"
    with engine.connect() as conn:
        runs = conn.execute(select(scrape_runs).order_by(scrape_runs.c.id)).mappings().all()
    assert sorted(r["provider"] for r in runs) == sorted(EXPECTED_STORED)
    assert {r["id"] for r in runs} == {o.run_id for o in summary.outcomes}
    for run in runs:
        assert (run["kind"], run["status"]) == ("refresh", "ok")
        assert run["finished_at"] >= run["started_at"]
        assert run["prices_stored"] == EXPECTED_STORED[run["provider"]]
    assert any(line.startswith("autodl: started (account/replay mode") for line in lines)
    assert any(line.startswith("aliyun: ok in") and "288 new" in line for line in lines)


def test_scraper_offers_merge_into_one_price_per_instance_and_billing(engine, tmp_path):
    summary = refresh(engine, tmp_path, from_raw=RAW)
    tencent = outcome(summary, "tencent")
    assert (tencent.offers, tencent.stored) == (13, 10)  # two zones, list next to discounted prices
    with engine.connect() as conn:
        rows = {
            (r.instance_type, r.billing): r
            for r in conn.execute(
                select(
                    instances.c.instance_type,
                    prices.c.billing,
                    prices.c.price,
                    prices.c.source,
                    prices.c.tiers,
                )
                .join(instances, instances.c.id == prices.c.instance_id)
                .where(instances.c.provider == "tencent")
            )
        }
    v100 = rows[("HCCG5v.24XLARGE384", "on_demand")]
    assert v100.price == Decimal("93.29") and "discounted; list 155.48" in v100.source
    assert json.loads(rows[("GN7.2XLARGE32", "on_demand")].tiers) == [[96, "8.2"], [360, "7.9"]]


def test_cli_refresh_then_quote_mixes_per_gpu_and_per_instance_prices(run_cli):
    result = run_cli("refresh", "--from-raw", str(RAW))
    assert result.exit_code == 0, result.output
    assert "aliyun" in result.stdout and "Every provider refreshed" in result.stdout
    assert "autodl: ok in" in result.stderr  # progress on standard error
    doc = json.loads(
        run_cli("quote", "--gpu", "H20", "--hours", "100", "--gpus", "8", "--format", "json").stdout
    )
    assert doc["from_snapshot"] is False  # fresh prices, not the bundled snapshot
    by_provider = {}
    for option in doc["options"]:
        by_provider.setdefault(option["provider"], option)
    assert set(by_provider) == {"autodl", "volcengine", "aliyun"}
    autodl, volc, aliyun = by_provider["autodl"], by_provider["volcengine"], by_provider["aliyun"]
    # AutoDL: one GPU per "instance", per-GPU price; 8 GPUs = 8 of them.
    assert (autodl["gpus_per_instance"], autodl["instances"], autodl["unit_price"]) == (1, 8, 6.98)
    assert autodl["total_cny"] == 5584 and autodl["cny_per_gpu_hour"] == 6.98
    # Volcengine: 8x H20 per instance at 236.80/h is 29.60 per GPU-hour.
    assert (volc["gpus_per_instance"], volc["instances"], volc["unit_price"]) == (8, 1, 236.8)
    assert volc["cny_per_gpu_hour"] == 29.6 and volc["total_cny"] == 23680
    # Aliyun gn8v-2x: 2 GPUs per instance, 4 instances at 71.58/h.
    assert (aliyun["gpus_per_instance"], aliyun["instances"], aliyun["cny_per_gpu_hour"]) == (2, 4, 35.79)
    # Cheapest first among the rentable options.
    totals = [o["total_cny"] for o in doc["options"] if not o["unavailable"]]
    assert totals == sorted(totals)
    # AutoDL has only 4 idle H20 for a job of 8: listed last, not recommended.
    assert doc["options"][-1]["provider"] == "autodl" and doc["options"][-1]["unavailable"] is True
    assert doc["recommendation"]["provider"] == "volcengine"


def test_autodl_median_is_never_a_rentable_option(run_cli):
    run_cli("refresh", "--from-raw", str(RAW))
    doc = json.loads(
        run_cli("quote", "--gpu", "4090", "--hours", "100", "--format", "json", "--top", "50").stdout
    )
    assert [(o["region"], o["instance_type"]) for o in doc["options"]] == [
        ("west-B", "RTX 4090"),
        ("beijing-A", "RTX 4090"),
        ("cn-shenzhen", "ecs.gn8t.4xlarge"),  # Aliyun's RTX 4090 family (issue 26), no median of its own
    ]
    west = doc["options"][0]
    assert west["unit_price"] == 1.88 and west["median_unit_price"] == 2.293
    listed = json.loads(run_cli("prices", "--provider", "autodl", "--format", "json").stdout)
    assert len(listed) == 9 and not any("median" in r["instance_type"] for r in listed)


def test_enabled_marketplaces_are_quoted_beside_autodl(run_cli, tmp_path, engine):
    config = tmp_path / "marketplaces.toml"
    config.write_text(
        "[providers.ppio]\nenabled = true\n\n[providers.compshare]\nenabled = true\n", encoding="utf-8"
    )
    result = run_cli("--config", str(config), "refresh", "--from-raw", str(RAW))
    assert result.exit_code == 0, result.output
    assert "ppio: ok in" in result.stderr and "compshare: ok in" in result.stderr
    assert stored_by_provider(engine) == EXPECTED_STORED
    with engine.connect() as conn:
        stock = dict(
            conn.execute(
                select(instances.c.provider, func.count())
                .select_from(availability.join(instances, instances.c.id == availability.c.instance_id))
                .group_by(instances.c.provider)
            ).all()
        )
    assert stock["ppio"] == 76 and stock["compshare"] == 20
    doc = json.loads(run_cli("quote", "--gpu", "RTX4090", "--hours", "100", "--format", "json").stdout)
    cheapest = {}
    for option in doc["options"]:
        cheapest.setdefault(option["provider"], option)
    assert set(cheapest) == {"autodl", "compshare", "ppio", "aliyun"}  # Aliyun: gn8t (issue 26)
    assert (cheapest["compshare"]["unit_price"], cheapest["compshare"]["instance_type"]) == (1.69, "4090 x1")
    assert (cheapest["ppio"]["unit_price"], cheapest["autodl"]["unit_price"]) == (1.69, 1.88)
    assert {o["gpu_model"] for o in doc["options"]} == {"RTX4090-24GB"}  # the 48 GB card is another model
    variants = json.loads(
        run_cli(
            "quote",
            "--gpu",
            "RTX4090",
            "--hours",
            "100",
            "--include-variants",
            "--top",
            "50",
            "--format",
            "json",
        ).stdout
    )
    assert "RTX4090-48GB" in {o["gpu_model"] for o in variants["options"]}


def test_second_refresh_on_the_same_day_adds_no_price_but_records_stock_again(engine, tmp_path):
    first = refresh(engine, tmp_path, from_raw=RAW)
    with engine.connect() as conn:
        stock_rows = conn.execute(select(func.count()).select_from(availability)).scalar()
    second = refresh(engine, tmp_path, from_raw=RAW)
    assert second.exit_code == 0
    for o in second.outcomes:
        assert (o.stored, o.changed) == (0, 0)
        assert o.already_present == outcome(first, o.provider).stored
    assert stored_by_provider(engine) == EXPECTED_STORED
    with engine.connect() as conn:
        assert conn.execute(select(func.count()).select_from(availability)).scalar() == 2 * stock_rows


def test_next_day_counts_changes_and_flags_a_tenfold_move(engine, tmp_path):
    refresh(engine, tmp_path, from_raw=RAW)
    age_everything(engine)
    with engine.begin() as conn:  # yesterday's GT4 was 20 times cheaper: today's 28.64 is suspicious
        gt4 = conn.execute(
            select(instances.c.id).where(instances.c.instance_type == "GT4.4XLARGE96")
        ).scalar()
        conn.execute(
            update(prices)
            .where(prices.c.instance_id == gt4, prices.c.billing == "on_demand")
            .values(price=Decimal("1.432"))
        )
    summary = refresh(engine, tmp_path, from_raw=RAW)
    tencent = outcome(summary, "tencent")
    # The next day's same prices confirm yesterday's (no new row); only the moved one is stored.
    assert (tencent.stored, tencent.changed, tencent.already_present) == (1, 1, 9)
    (flagged,) = tencent.flagged
    assert "ap-beijing/GT4.4XLARGE96 on_demand" in flagged and ": 1.432" in flagged
    assert any("moved more than tenfold" in n for n in tencent.notes)
    assert outcome(summary, "aliyun").flagged == ()
    with engine.connect() as conn:
        run = conn.execute(select(scrape_runs).where(scrape_runs.c.id == tencent.run_id)).mappings().one()
    assert run["prices_flagged"] == 1 and "GT4.4XLARGE96" in run["notes"]
    # flagged, still stored: 10 levels from yesterday and the moved price's new one
    assert stored_by_provider(engine)["tencent"] == 11


def test_unknown_gpus_are_counted_and_named(engine, tmp_path, run_cli):
    summary = refresh(engine, tmp_path, from_raw=RAW)
    autodl = outcome(summary, "autodl")
    # vGPU-32GB has market offers (counted); vGPU-48GB is only in AutoDL's GPU list.
    assert autodl.unknown_gpus == ("vGPU-32GB", "vGPU-48GB")
    assert autodl.skipped == 1
    assert any("vGPU-32GB (1 offer(s) not stored)" in n for n in autodl.notes)
    with engine.connect() as conn:
        run = conn.execute(select(scrape_runs).where(scrape_runs.c.id == autodl.run_id)).mappings().one()
    assert run["unknown_gpus"] == "vGPU-32GB, vGPU-48GB" and run["offers_skipped"] == 1
    aliyun = outcome(summary, "aliyun")
    assert aliyun.skipped == 15
    assert any("not in the table" in n and "(ecs.gn8ia-2x.8xlarge)" in n for n in aliyun.notes)


def test_an_instance_relabelled_with_another_gpu_is_skipped_and_named(engine, tmp_path):
    with engine.begin() as conn:
        run = store.start_run(conn, "*", "import")
        store.upsert_instances(
            conn, [store.InstanceRow("tencent", "ap-beijing", "GT4.4XLARGE96", "A800-80GB", 1)]
        )
        store.finish_run(conn, run, "ok")
    summary = refresh(engine, tmp_path, from_raw=RAW, providers=["tencent"])
    tencent = outcome(summary, "tencent")
    assert tencent.status == "ok" and tencent.stored == 8  # GT4's two prices are not stored
    conflict = next(n for n in tencent.notes if "recorded with another GPU" in n)
    assert "ap-beijing/GT4.4XLARGE96 on_demand" in conflict
    assert "1x A800-80GB" in conflict and "now 1x A100-40GB" in conflict  # was, and is now


def test_disabled_and_unrecorded_providers_are_skipped_runs(engine, tmp_path):
    folder = replay_copy(tmp_path)
    shutil.rmtree(folder / "volcengine")
    config = make_config(tmp_path, providers={"aliyun": {"enabled": False}})
    summary = refresh(engine, tmp_path, config, from_raw=folder)
    assert summary.exit_code == 0
    assert outcome(summary, "aliyun").status == "skipped"
    assert "[providers.aliyun] enabled = true" in outcome(summary, "aliyun").error
    assert outcome(summary, "volcengine").status == "skipped"
    assert "nothing recorded for volcengine" in outcome(summary, "volcengine").error
    on = {p: n for p, n in EXPECTED_STORED.items() if p not in ("aliyun", "volcengine")}
    assert stored_by_provider(engine) == on
    with engine.connect() as conn:
        statuses = dict(conn.execute(select(scrape_runs.c.provider, scrape_runs.c.status)).all())
    assert statuses == {"aliyun": "skipped", "volcengine": "skipped"} | dict.fromkeys(on, "ok")


def test_the_marketplaces_are_off_by_default(engine, tmp_path):
    summary = run_refresh(engine, load_config(env={}, cwd=tmp_path), from_raw=RAW, env={})
    for name in OFF_BY_DEFAULT:
        assert outcome(summary, name).status == "skipped"
        assert f"[providers.{name}] enabled = true" in outcome(summary, name).error
    assert set(stored_by_provider(engine)) == set(EXPECTED_STORED) - set(OFF_BY_DEFAULT)


def test_providers_option_runs_only_those(engine, tmp_path):
    summary = refresh(engine, tmp_path, from_raw=RAW, providers=["Tencent", "autodl"])
    assert [o.provider for o in summary.outcomes] == ["tencent", "autodl"]
    assert set(stored_by_provider(engine)) == {"tencent", "autodl"}


class Hanging:
    """A provider that never answers (until released), to test the per-provider timeout."""

    name = "volcengine"
    credential_env = ("VOLCENGINE_ACCESS_KEY",)
    http_policy = HttpPolicy()
    released = threading.Event()

    def mode(self, env):
        from scrapers.types import ProviderMode

        return ProviderMode("public", False, "hangs")

    def scrape(self, client, settings):
        self.released.wait(30)
        raise AssertionError("a timed-out provider's result must be ignored")
        yield


@pytest.mark.slow  # the shortest provider timeout the config accepts is 1 s of wall clock
def test_a_hanging_provider_times_out_without_costing_the_others(engine, tmp_path, monkeypatch):
    from scrapers import registry

    Hanging.released.clear()
    monkeypatch.setitem(registry.PROVIDERS, "volcengine", Hanging)
    config = make_config(tmp_path, refresh={"provider_timeout_s": 1, "concurrency": 4})
    started = time.monotonic()
    try:
        summary = refresh(engine, tmp_path, config, from_raw=RAW)
    finally:
        Hanging.released.set()
    assert time.monotonic() - started < 10
    volc = outcome(summary, "volcengine")
    assert volc.status == "failed" and "timed out after 1 s" in volc.error
    assert summary.exit_code == 1
    assert {o.provider for o in summary.outcomes if o.status == "ok"} == set(EXPECTED_STORED) - {"volcengine"}
    assert "volcengine" not in stored_by_provider(engine)
    with engine.connect() as conn:
        run = conn.execute(select(scrape_runs).where(scrape_runs.c.id == volc.run_id)).mappings().one()
    assert run["status"] == "failed" and "timed out" in run["error"]


def test_concurrency_one_runs_providers_one_after_another(engine, tmp_path):
    config = make_config(tmp_path, refresh={"concurrency": 1})
    lines: list[str] = []
    summary = refresh(engine, tmp_path, config, from_raw=RAW, progress=lines.append)
    assert summary.exit_code == 0
    events = [
        line.split(":")[0] + (" start" if "started" in line else " end") for line in lines[2:]
    ]  # after "settings from", "refreshing"
    assert events == [f"{p} {e}" for p in EXPECTED_STORED for e in ("start", "end")]


def test_record_then_replay_stores_the_same_prices_without_secrets(db_url, tmp_path):
    with responses.RequestsMock() as rsps:
        _record_then_replay(db_url, tmp_path, rsps)


def _record_then_replay(db_url, tmp_path, rsps):
    from responses import matchers

    from db.engine import ensure_schema, make_engine
    from scrapers.providers.tencent import API_URL

    bj = json.loads(
        (RAW.parent / "tencent" / "DescribeZoneInstanceConfigInfos_ap-beijing.constructed.json").read_text()
    )
    rsps.post(API_URL, json=bj, match=[matchers.header_matcher({"X-TC-Region": "ap-beijing"})])
    secret_env = {
        "TENCENTCLOUD_SECRET_ID": "AKIDrecordtest",
        "TENCENTCLOUD_SECRET_KEY": "record-secret-XYZ-123",
    }
    config = make_config(tmp_path, providers={"tencent": {"regions": ["ap-beijing"]}})
    live = make_engine(db_url)
    ensure_schema(live)
    recorded = run_refresh(live, config, ["tencent"], save_raw=tmp_path / "rec", env=secret_env)
    assert outcome(recorded, "tencent").status == "ok" and outcome(recorded, "tencent").mode == "account"
    manifest = json.loads((tmp_path / "rec" / "manifest.json").read_text())
    assert manifest["providers"]["tencent"] == {
        "mode": "account",
        "regions": ["ap-beijing"],
        "options": {},
        "recorded_at": manifest["providers"]["tencent"]["recorded_at"],
    }
    saved = "".join(p.read_text(errors="replace") for p in (tmp_path / "rec").rglob("*") if p.is_file())
    assert "record-secret-XYZ-123" not in saved and "AKIDrecordtest" not in saved
    rsps.reset()
    # Replayed into a fresh database, with no credentials at all and the default regions configured.
    with live.begin() as conn:
        for table in (run_offers, availability, prices, instances, scrape_runs):
            conn.execute(table.delete())
    replayed = run_refresh(live, make_config(tmp_path), ["tencent"], from_raw=tmp_path / "rec", env={})
    assert outcome(replayed, "tencent").mode == "account/replay"
    assert outcome(replayed, "tencent").stored == outcome(recorded, "tencent").stored == 8
    assert len(rsps.calls) == 0
    live.dispose()


def test_autodl_without_a_token_reads_the_gpu_list_and_says_so(
    run_cli, tmp_path, monkeypatch, no_pause_between_requests
):
    from scrapers.providers.autodl import GPU_TYPE_URL, REGION_URL, SEARCH_URL

    monkeypatch.delenv("AUTODL_TOKEN", raising=False)
    saved = tmp_path / "saved"
    with responses.RequestsMock() as rsps:
        rsps.get(GPU_TYPE_URL, body=(RAW.parent / "autodl" / "gpu_type.json").read_bytes())
        rsps.get(REGION_URL, body=(RAW.parent / "autodl" / "region_list.json").read_bytes())
        result = run_cli("refresh", "--provider", "autodl", "--save-raw", str(saved))
        assert not any(c.request.url == SEARCH_URL for c in rsps.calls)
    assert result.exit_code == 0, result.output
    assert "no AUTODL_TOKEN" in result.stdout and "market prices not read" in result.stdout
    unknown = next(line for line in result.stdout.splitlines() if "unknown GPUs:" in line)
    assert "vGPU-32GB (GPU list)" in unknown and "vGPU-48GB (GPU list)" in unknown
    assert "`planner providers`" in result.stdout  # where to see what to set
    manifest = json.loads((saved / "manifest.json").read_text())
    assert manifest["providers"]["autodl"]["mode"] == "public"
    assert len(list((saved / "autodl").glob("*.body"))) == 2
