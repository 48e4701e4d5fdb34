"""``planner runs`` and ``planner providers`` in every format, and the refresh command's laziness."""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
import subprocess
import sys
from pathlib import Path

from sqlalchemy import update

from db import store
from db.schema import scrape_runs
from planner.providers import PROVIDERS
from tests.helpers.replay import RAW, break_autodl_expired_token, replay_copy

ROOT = Path(__file__).resolve().parents[2]


def test_runs_lists_recent_runs_and_each_providers_health(run_cli, tmp_path):
    assert run_cli("refresh", "--from-raw", str(RAW)).exit_code == 0
    broken = replay_copy(tmp_path)
    break_autodl_expired_token(broken)
    assert run_cli("refresh", "--from-raw", str(broken)).exit_code == 1
    table = run_cli("runs").stdout
    header = table.splitlines()[0].split()
    assert header[:5] == ["id", "started", "(UTC)", "provider", "kind"]
    body = [line for line in table.splitlines()[2:] if line[:3].strip().isdigit()]
    runs = 2 * len(PROVIDERS)  # one run per provider and refresh (the marketplaces off: skipped)
    assert len(body) == runs and body[0].split()[0] == str(runs)  # newest first
    assert "failed" in body[0] and "log in again and refresh AUTODL_TOKEN" in table
    assert "unknown GPUs vGPU-32GB, vGPU-48GB" in table
    assert "autodl: last refresh failed" in table and "(1 failed run(s) since" in table
    assert "tencent: last refresh ok" in table
    doc = json.loads(run_cli("runs", "--format", "json", "--provider", "autodl", "--limit", "1").stdout)
    (run,) = doc["runs"]
    assert (run["provider"], run["status"], run["mode"], run["prices_stored"]) == (
        "autodl",
        "failed",
        "account/replay",
        0,
    )
    assert {h["provider"] for h in doc["health"]} == {"autodl"}
    rows = list(csv.DictReader(io.StringIO(run_cli("runs", "--format", "csv").stdout)))
    assert len(rows) == runs and {"id", "status", "offers_seen", "prices_flagged", "notes"} <= set(rows[0])


def test_a_run_left_running_long_ago_shows_as_interrupted(engine, run_cli):
    with engine.begin() as conn:
        run = store.start_run(conn, "aliyun", "refresh")
        conn.execute(
            update(scrape_runs)
            .where(scrape_runs.c.id == run)
            .values(started_at=store.utcnow() - dt.timedelta(hours=3))
        )
    assert "interrupted" in run_cli("runs").stdout


def test_the_next_refresh_closes_runs_a_killed_process_left_running(engine, run_cli, tmp_path):
    """Under the refresh lock no other refresh is alive, so a refresh run still 'running' is dead."""
    from sqlalchemy import select

    from planner.providers import PROVIDERS

    with engine.begin() as conn:
        dead = store.start_run(conn, "aliyun", "refresh")
        importing = store.start_run(conn, "*", "import")  # not a refresh: the refresh lock says nothing
    config = tmp_path / "off.toml"
    config.write_text("".join(f"[providers.{name}]\nenabled = false\n" for name in PROVIDERS))
    result = run_cli("--config", str(config), "refresh")
    assert result.exit_code == 0, result.output
    marked = next(line for line in result.stderr.splitlines() if "left 'running'" in line)
    assert marked.startswith("1 earlier refresh run(s) ") and "interrupted" in marked  # the count, the state
    with engine.connect() as conn:
        found = {
            r.id: r
            for r in conn.execute(
                select(scrape_runs.c.id, scrape_runs.c.status, scrape_runs.c.finished_at, scrape_runs.c.error)
            )
        }
    assert found[dead].status == "interrupted" and found[dead].finished_at is not None
    assert "stored nothing" in found[dead].error
    assert found[importing].status == "running"
    doc = json.loads(run_cli("runs", "--format", "json", "--provider", "aliyun").stdout)
    assert [r["status"] for r in doc["runs"]] == ["skipped", "interrupted"]


def test_runs_on_an_empty_database(run_cli):
    result = run_cli("runs")
    assert result.exit_code == 0 and "No runs yet" in result.stdout


def test_providers_says_what_each_mode_sees_and_what_to_set(run_cli, monkeypatch, tmp_path):
    for var in ("AUTODL_TOKEN", "TENCENTCLOUD_SECRET_ID", "TENCENTCLOUD_SECRET_KEY", "ALIBABA_CLOUD_ACCESS_KEY_ID",
                "ALIBABA_CLOUD_ACCESS_KEY_SECRET", "VOLCENGINE_ACCESS_KEY", "VOLCENGINE_SECRET_KEY"):  # fmt: skip
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("AUTODL_TOKEN", "tok-sensitive-value-123")
    monkeypatch.setenv("TENCENTCLOUD_SECRET_ID", "AKIDonlyhalf")  # the key is missing: still public
    config = tmp_path / "c.toml"
    config.write_text(
        '[providers.volcengine]\nenabled = false\nbase_url = "http://127.0.0.1:9"\n', encoding="utf-8"
    )
    table = run_cli("--config", str(config), "providers").stdout
    assert "autodl: enabled, account mode" in table
    assert "tencent: enabled, public mode" in table
    assert "TENCENTCLOUD_SECRET_ID set" in table and "TENCENTCLOUD_SECRET_KEY not set" in table
    assert "volcengine: DISABLED" in table and "base_url http://127.0.0.1:9" in table
    assert "QcloudCVMReadOnlyAccess" in table and 'without "Bearer"' not in table  # autodl needs nothing more
    doc = json.loads(run_cli("--config", str(config), "providers", "--format", "json").stdout)
    by_name = {p["provider"]: p for p in doc}
    assert list(by_name) == list(PROVIDERS)
    assert by_name["ppio"]["enabled"] is False and by_name["ppio"]["to_see_more"] == ["PPIO_API_KEY"]
    ppio = next(line for line in table.splitlines() if line.strip().startswith("ppio:"))
    assert "ppio: DISABLED" in ppio and ppio.endswith("public mode")
    assert by_name["tencent"]["to_see_more"] == ["TENCENTCLOUD_SECRET_ID", "TENCENTCLOUD_SECRET_KEY"]
    assert by_name["autodl"]["mode"] == "account" and by_name["autodl"]["to_see_more"] == []
    assert by_name["aliyun"]["to_see_more"] == [
        "ALIBABA_CLOUD_ACCESS_KEY_ID",
        "ALIBABA_CLOUD_ACCESS_KEY_SECRET",
    ]
    assert by_name["autodl"]["charge_types"] == ["payg"] and by_name["volcengine"]["enabled"] is False
    assert "no prices" not in by_name["autodl"]["sees"] and "no spot" in by_name["aliyun"]["sees"]
    csv_out = run_cli("providers", "--format", "csv").stdout
    for text in (table, json.dumps(doc), csv_out):
        assert "tok-sensitive-value-123" not in text and "AKIDonlyhalf" not in text


def test_refresh_usage_mistakes(run_cli, tmp_path):
    typo = run_cli("refresh", "--provider", "tencnet")
    assert typo.exit_code == 2 and "unknown provider 'tencnet'" in typo.stderr and "tencent" in typo.stderr
    missing = run_cli("refresh", "--from-raw", str(tmp_path / "nope"))
    assert missing.exit_code == 2 and "does not exist" in missing.stderr


def test_help_stays_lazy():
    code = (
        "import sys\nfrom planner.cli import cli\n"
        "try:\n    cli.main(['--help'])\nexcept SystemExit:\n    pass\n"
        "lazy = {'planner.ingest.refresh', 'planner.ingest.runs', 'planner.ingest.store', 'planner.ingest.run_text',"
        " 'planner.ingest.manifest', 'planner.commands.refresh', 'planner.commands.history', 'scrapers', 'requests'}\n"
        "print('LOADED', sorted(lazy & set(sys.modules)))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True
    ).stdout
    assert "LOADED []" in out and "refresh" in out and "history" in out
