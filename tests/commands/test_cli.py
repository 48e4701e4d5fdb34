"""The command line as a user meets it: first run on the bundled snapshot, output formats, and a
one-line error (no traceback, non-zero exit) for every mistake."""

from __future__ import annotations

import csv
import io
import json

import pytest
from sqlalchemy import func, select

from db.schema import prices
from tests.conftest import price_row, write_csv


def test_first_quote_answers_from_the_bundled_snapshot(run_cli):
    result = run_cli("quote", "--gpu", "A100", "--hours", "500", "--top", "50")
    assert result.exit_code == 0, result.output
    assert "loaded the bundled snapshot 2026-" in result.stderr
    assert "bundled snapshot" in result.stdout
    doc = json.loads(
        run_cli("quote", "--gpu", "A100", "--hours", "500", "--top", "50", "--format", "json").stdout
    )
    providers = {o["provider"] for o in doc["options"]}
    assert len(providers) >= 3, providers
    assert doc["from_snapshot"] is True
    assert all(o["source"] and o["observed_at"] for o in doc["options"])
    assert {o["gpu_model"] for o in doc["options"]} <= {"A100-40GB", "A100-80GB"}


def test_import_into_an_empty_database_does_not_load_the_snapshot(run_cli, tmp_path):
    result = run_cli("import", str(write_csv(tmp_path / "p.csv", [price_row()])))
    assert result.exit_code == 0, result.output
    assert "1 new price" in result.stdout
    doc = json.loads(run_cli("quote", "--gpu", "A100", "--hours", "500", "--format", "json").stdout)
    assert [o["provider"] for o in doc["options"]] == ["tencent"]
    assert doc["from_snapshot"] is False


def test_quote_csv_and_table(run_cli, tmp_path):
    run_cli(
        "import",
        str(write_csv(tmp_path / "p.csv", [price_row(), price_row(billing="monthly", price="12948")])),
    )
    rows = list(
        csv.DictReader(
            io.StringIO(run_cli("quote", "--gpu", "A100", "--hours", "500", "--format", "csv").stdout)
        )
    )
    assert len(rows) == 1 and rows[0]["billing"] == "monthly" and rows[0]["total_cny"] == "12948.00"
    table = run_cli("quote", "--gpu", "A100", "--hours", "500").stdout
    assert "Recommendation: tencent GT4.4XLARGE96" in table
    assert "monthly subscription" in table and "above 452.1 hours per month" in table  # the break-even


def test_prices_lists_latest_with_filters(run_cli, tmp_path):
    rows = [
        price_row(observed_at="2026-10-01", price="30"),
        price_row(observed_at="2026-10-02", price="28.64"),
        price_row(
            provider="autodl", region="west-B", instance_type="RTX 4090", gpu_model="RTX 4090", price="1.88"
        ),
    ]
    run_cli("import", str(write_csv(tmp_path / "p.csv", rows)))
    doc = json.loads(run_cli("prices", "--format", "json").stdout)
    assert len(doc) == 2
    a100 = next(r for r in doc if r["gpu_model"] == "A100-40GB")
    assert a100["price"] == 28.64 and a100["cny_per_gpu_hour"] == 28.64
    only = json.loads(run_cli("prices", "--gpu", "4090", "--format", "json").stdout)
    assert [r["provider"] for r in only] == ["autodl"]
    assert json.loads(run_cli("prices", "--provider", "aliyun", "--format", "json").stdout) == []


def test_gpus_lists_the_catalog(run_cli):
    result = run_cli("gpus", "--format", "json")
    names = {g["name"] for g in json.loads(result.stdout)}
    assert {"A100-40GB", "A100-80GB", "H800-80GB", "RTX4090D-24GB"} <= names
    variants = json.loads(run_cli("gpus", "--gpu", "A100", "--include-variants", "--format", "json").stdout)
    assert [g["name"] for g in variants] == ["A100-40GB", "A100-80GB", "A800-80GB"]


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["quote", "--gpu", "A1000", "--hours", "5"], 2, "unknown GPU 'A1000'"),
        (["quote", "--gpu", "A100", "--hours", "-5"], 2, "--hours must be positive"),
        (["quote", "--gpu", "A100", "--hours", "many"], 2, "--hours 'many' is not a number"),
        (["quote", "--gpu", "A100", "--hours", "5", "--gpus", "0"], 2, "--gpus must be positive"),
        (["quote", "--gpu", "A100", "--hours", "5", "--billing", "fortnightly"], 2, "unknown billing mode"),
        (["quote", "--gpu", "A100", "--hours", "100", "--days", "2"], 2, "100 hours do not fit in 2 days"),
        (["quote", "--gpu", "A100", "--hours", "5", "--provider", "aws"], 2, "unknown provider 'aws'"),
        (["quote", "--hours", "5"], 2, "Missing option '--gpu'"),
        (["import", "/no/such/file.csv"], 2, "cannot read '/no/such/file.csv'"),
        (["qoute"], 2, "did you mean 'quote'"),
    ],
)
def test_user_mistakes_get_one_clear_line(run_cli, args, code, message):
    result = run_cli(*args)
    assert result.exit_code == code, result.output
    assert message in result.output
    assert "Traceback" not in result.output
    assert not isinstance(result.exception, Exception) or isinstance(result.exception, SystemExit)


def test_unknown_gpu_suggests_close_names(run_cli):
    result = run_cli("quote", "--gpu", "H8OO", "--hours", "5")
    assert result.exit_code == 2
    assert "Hint: did you mean" in result.stderr and "H800" in result.stderr


def test_bad_csv_row_stores_nothing(run_cli, tmp_path, db_url):
    from sqlalchemy import create_engine

    bad = write_csv(tmp_path / "bad.csv", [price_row(), price_row(price="-1")])
    result = run_cli("import", str(bad))
    assert result.exit_code == 2
    assert "bad.csv: line 3: price '-1'" in result.stderr and "greater than zero" in result.stderr
    engine = create_engine(db_url)
    with engine.connect() as conn:
        assert conn.execute(select(func.count()).select_from(prices)).scalar_one() == 0
    engine.dispose()


def test_unreachable_database_is_one_line(runner, tmp_path):
    from planner.cli import cli

    url = "postgresql+psycopg://nobody@127.0.0.1:1/none"
    result = runner.invoke(cli, ["--db", url, "prices"])
    assert result.exit_code == 1
    assert result.stderr.startswith(f"Error: cannot open database {url}")
    assert "Traceback" not in result.output
    bad_url = runner.invoke(cli, ["--db", "nonsense://", "prices"])
    assert bad_url.exit_code == 2 and "cannot use database URL" in bad_url.stderr


def test_every_command_has_help_with_an_example(runner):
    from planner.cli import COMMANDS, cli

    top = runner.invoke(cli, ["--help"])
    assert top.exit_code == 0 and "planner quote --gpu A100 --hours 500" in top.output
    for name in COMMANDS:
        result = runner.invoke(cli, [name, "--help"])
        assert result.exit_code == 0, name
        assert "Example" in result.output, name


def test_python_dash_m_entry_point():
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-m", "planner", "--version"], capture_output=True, text=True, check=True
    )
    assert done.stdout.startswith("planner, version ")


@pytest.mark.parametrize(
    ("args", "fragment", "command"),
    [
        (["quote", "--gpu", "A100", "--hourz", "5"], "No such option '--hourz'", "planner quote"),
        (["quote", "--hours", "5"], "Missing option '--gpu'", "planner quote"),
        (
            ["quote", "--gpu", "A100", "--hours", "5", "--price-basis", "mean"],
            "Invalid value for '--price-basis'",
            "planner quote",
        ),
        (["--dbb", "x", "quote"], "No such option '--dbb'", "planner"),
        (["qoute"], "No such command 'qoute'", "planner"),
    ],
)
def test_click_usage_errors_print_in_the_house_style(run_cli, args, fragment, command):
    result = run_cli(*args)
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 2 and lines[1].startswith(f"Hint: see '{command} --help' "), lines
    assert lines[0].startswith("Error: ") and fragment in lines[0]
    assert "Usage:" not in result.output and "Try '" not in result.output


def test_format_is_case_insensitive(run_cli):
    result = run_cli("gpus", "--gpu", "A100", "--format", "JSON")
    assert result.exit_code == 0, result.output
    assert result.stdout.lstrip().startswith("[") or result.stdout.lstrip().startswith("{")
