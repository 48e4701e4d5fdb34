"""Alerts judge refreshed and imported prices only: on the bundled snapshot alone (a fresh install)
``planner alerts check`` says in one line that nothing can fire, and says it no more once a refresh
or an import has stored prices."""

from __future__ import annotations

import json
import shutil

from tests.conftest import price_row, write_csv
from tests.helpers.alerts import AFTER, recorded_now

CONFIG = """
[[alerts]]
name = "any-a100"
gpu = "A100"
below_cny_per_gpu_hour = 1000
channels = ["team"]

[[alerts]]
name = "any-4090"
gpu = "4090"
below_cny_per_gpu_hour = 1000
channels = ["team"]

[channels.team]
kind = "wecom"
"""


def snapshot_only(note: str) -> bool:
    """The one-line note that nothing can fire: only the snapshot's prices are stored, and what to run."""
    return (
        note.startswith("No alert can fire yet")
        and "only the bundled snapshot" in note
        and "planner refresh" in note
    )


def check(run_cli, config, *extra: str):
    result = run_cli("--config", str(config), "alerts", "check", *extra)
    assert result.exit_code == 0, result.output
    return result


def test_on_the_snapshot_alone_alerts_check_says_in_one_line_that_nothing_can_fire(run_cli, tmp_path):
    config = tmp_path / "alerts.toml"
    config.write_text(CONFIG, encoding="utf-8")
    empty = check(run_cli, config, "--dry-run").stdout
    first = empty.splitlines()[0]
    assert first.startswith("No alert can fire yet") and "holds no prices" in first

    assert run_cli("quote", "--gpu", "A100", "--hours", "10").exit_code == 0  # loads the snapshot
    table = check(run_cli, config).stdout  # A100s under 1000 CNY/GPU-h abound in the snapshot
    assert snapshot_only(table.splitlines()[0]) and table.count("No alert can fire yet") == 1
    assert "0 alert(s) fired" in table
    doc = json.loads(check(run_cli, config, "--format", "json").stdout)
    assert snapshot_only(doc["note"]) and doc["fired"] == [] and doc["deliveries"] == []


def test_the_line_goes_once_a_refresh_or_an_import_stored_prices(run_cli, tmp_path, monkeypatch):
    config = tmp_path / "alerts.toml"
    config.write_text(CONFIG, encoding="utf-8")
    assert run_cli("quote", "--gpu", "A100", "--hours", "10").exit_code == 0
    imported = write_csv(tmp_path / "p.csv", [price_row(observed_at="2026-11-01")])
    assert run_cli("import", str(imported)).exit_code == 0
    doc = json.loads(check(run_cli, config, "--dry-run", "--format", "json").stdout)
    assert doc["note"] is None and [f["rule"] for f in doc["fired"]] == ["any-a100"]

    folder = recorded_now(AFTER)
    refreshed = run_cli(
        "--config", str(config), "refresh", "--from-raw", str(folder), "--provider", "autodl", "--no-alerts"
    )
    shutil.rmtree(folder.parent, ignore_errors=True)
    assert refreshed.exit_code == 0, refreshed.output
    table = check(run_cli, config, "--dry-run").stdout
    assert "No alert can fire yet" not in table and "any-4090" in table
