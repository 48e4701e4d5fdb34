"""Commands are thin shells: the library speaks in quantities, the command line in the flags typed;
every command prints through one ``emit``; answers that match nothing say what would."""

from __future__ import annotations

import json

import pytest

from planner.errors import QuantityError, UsageError
from planner.pricing import Job
from planner.quote import QuoteRequest, validate


@pytest.mark.parametrize(
    ("call", "quantity"),
    [
        (lambda: Job.check(1, -5, None, "latest", 30), "hours"),
        (lambda: Job.check(0, 5, None, "latest", 30), "gpus"),
        (lambda: validate(QuoteRequest(gpu="A100", hours=10, top=0)), "top"),
    ],
)
def test_library_errors_name_the_quantity_not_a_flag(call, quantity):
    with pytest.raises(QuantityError) as err:
        call()
    assert err.value.quantity == quantity
    assert "--" not in err.value.message and "--" not in (err.value.hint or "")


def test_the_command_words_a_quantity_as_the_flag_typed(run_cli):
    result = run_cli("quote", "--gpu", "A100-80GB", "--hours", "1K", "--gpus", "0.5K", "--days", "0")
    assert result.exit_code == 2
    assert "Error: --days must be positive" in result.output  # read by the option type
    result = run_cli("quote", "--gpu", "A100-80GB", "--hours", "1K", "--gpus", "200K")
    assert result.exit_code == 2
    assert "Error: --gpus must be between 1 and 100000, got 200000" in result.output  # by the library
    assert "Hint: e.g. --gpus 8" in result.output


def test_plan_never_names_a_flag_that_was_not_given(run_cli):
    result = run_cli(
        "plan", "--model", "qwen2.5-7b", "--task", "pretrain", "--tokens", "2B", "--deadline-hours", "0.001"
    )
    assert result.exit_code == 0, result.output
    assert "--gpus " not in result.output
    assert "GPUs to finish in 0.001 h, more than the 100,000 a plan considers" in result.output


def test_a_quantity_error_about_no_flag_of_the_command_keeps_its_plain_name():
    from planner.commands.flags import as_typed
    from planner.commands.workload import plan

    err = QuantityError("gpus", "204.9K is more than 100.0K", "8")
    assert as_typed(err, plan) is err  # plan has --gpus-max, not --gpus
    worded = as_typed(QuantityError("gpus_max", "must be from 1 to 100,000, got 0", "8"), plan)
    assert isinstance(worded, UsageError)
    assert (worded.message, worded.hint) == (
        "--gpus-max must be from 1 to 100,000, got 0",
        "e.g. --gpus-max 8",
    )


def test_no_prices_match_says_add_include_variants_when_a_variant_is_stored(run_cli):
    # the bundled snapshot has AutoDL H800 prices and no AutoDL H100 (its H100 prices are Tencent's and
    # Volcengine's)
    result = run_cli("prices", "--gpu", "H100", "--provider", "autodl")
    assert result.exit_code == 0, result.output
    assert "No prices match these filters. Hint: add --include-variants (H800-80GB stored)." in result.output
    assert (
        "H800-80GB" in run_cli("prices", "--gpu", "H100", "--provider", "autodl", "--include-variants").output
    )


def test_no_prices_match_says_what_regions_look_like(run_cli):
    result = run_cli("prices", "--region", "shenzhen")
    hint = result.output.split("Hint: ")[1]
    assert hint.startswith("regions look like") and "cn-shenzhen" in hint
    assert "No prices match these filters.\n" in run_cli("prices", "--region", "atlantis").output


def test_the_database_empty_line_is_printed_once_to_stderr(runner, db_url, tmp_path):
    from planner.cli import cli

    result = runner.invoke(cli, ["--db", db_url, "prices", "--format", "json"])
    assert result.exit_code == 0
    assert result.stderr.count("Database empty: loaded the bundled snapshot") == 1
    json.loads(result.stdout)  # standard output stays pure JSON


def test_runs_shows_a_run_running_for_twice_the_timeout_as_interrupted():
    import datetime as dt

    from planner.refresh_runs import seen_status

    start = dt.datetime(2026, 12, 1, 0, 0)
    assert seen_status("running", start, start + dt.timedelta(seconds=1801), 900) == "interrupted"
    assert seen_status("running", start, start + dt.timedelta(seconds=1799), 900) == "running"
    assert seen_status("ok", start, start + dt.timedelta(days=9), 900) == "ok"


def _leaf_commands():
    """(name, click command) of every command, subcommands of groups (``alerts list``) included."""
    import click

    from planner.cli import COMMANDS, cli

    ctx = click.Context(cli)
    for name in COMMANDS:
        command = cli.get_command(ctx, name)
        if isinstance(command, click.Group):
            yield from ((f"{name} {sub}", c) for sub, c in command.commands.items())
        else:
            yield name, command


def _option(command, flag):
    return next((p for p in command.params if flag in getattr(p, "opts", ())), None)


def test_every_command_spells_the_shared_options_the_same_way():
    """--gpu, --provider, --billing and --format: one spelling, metavar and meaning wherever they occur,
    and every command that prints data has --format table|json|csv (any case)."""
    import click

    from planner.commands.options import _one_gpu
    from planner.output import FORMATS

    quiet = {"export"}  # export writes CSV, its one format
    for name, command in _leaf_commands():
        fmt = _option(command, "--format")
        if name not in quiet:
            assert fmt is not None, f"{name} has no --format"
        if fmt is not None:
            assert isinstance(fmt.type, click.Choice) and tuple(fmt.type.choices) == FORMATS, name
            assert fmt.type.case_sensitive is False, name
        gpu = _option(command, "--gpu")
        if gpu is not None:  # several GPUs, or one and an error for a second: never "the last one wins"
            assert gpu.metavar == "GPU" and gpu.multiple, name
            assert gpu.callback is _one_gpu or "(repeatable)" in gpu.help, name
        for flag, metavar in (("--provider", "NAME"), ("--billing", "MODE")):
            option = _option(command, flag)
            if option is not None:
                assert option.multiple and option.metavar == metavar, f"{name} {flag}"


SPELLED = ["--provider", "ALIYUN", "--billing", "按量", "--format", "JSON"]


@pytest.mark.parametrize(
    "args",
    [
        ["prices", "--gpu", "a100-80gb", *SPELLED],
        ["quote", "--gpu", "a100-80gb", "--hours", "1.5e3", *SPELLED],
        ["history", "--gpu", "a100-80gb", *SPELLED],
        ["plan", "--model", "qwen2.5-7b", "--task", "lora", "--tokens", "1B", "--gpu", "a100-80gb", *SPELLED],
        ["tco", "--gpu", "a100-80gb", "--hours", "1K", *SPELLED],
        ["gpus", "--value", "--gpu", "a100-80gb", *SPELLED],
        ["runs", "--provider", "ALIYUN", "--format", "JSON"],
    ],
    ids=lambda args: args[0],
)
def test_every_data_command_accepts_the_same_spellings(run_cli, args):
    result = run_cli(*args)
    assert result.exit_code == 0, result.output
    json.loads(result.stdout)


@pytest.mark.parametrize("command", [["quote", "--hours", "5"], ["history"], ["tco", "--hours", "5"]])
def test_a_second_gpu_where_one_is_taken_is_an_error_not_the_last_one_winning(run_cli, command):
    result = run_cli(command[0], "--gpu", "A100-80GB", "--gpu", "H800", *command[1:])
    assert result.exit_code == 2
    assert "takes one GPU, got 'A100-80GB', 'H800'" in result.stderr


def test_the_star_note_lists_each_reason_once():
    from planner.commands.notes import star_note

    notes = [
        "GPU inferred from the gn7e family, not stated by Aliyun",
        "GPU inferred from the gn6i family, not stated by Aliyun",
        "GPU inferred from the gn7e family, not stated by Aliyun",
        "A100 memory size not stated by the source; assumed 80 GB",
        "A100 memory size not stated by the source; assumed 40 GB",
        None,
        "listed as 'GPU' only",
    ]
    assert star_note(notes) == (
        "* GPU model inferred, not stated by the source: from the instance family at Aliyun (gn6i, gn7e); "
        "A100 memory size not stated, assumed 40 or 80 GB; listed as 'GPU' only."
    )
    assert star_note([None, ""]) is None


def test_a_missing_folder_is_created_with_a_line_saying_so(runner, tmp_path):
    from planner.cli import cli

    db = tmp_path / "new" / "deeper" / "planner.db"
    out = tmp_path / "reports" / "today"
    result = runner.invoke(cli, ["--db", f"sqlite:///{db}", "report", "--out", str(out), "--no-chart"])
    assert result.exit_code == 0, result.output
    assert f"Created the folder {db.parent} for the database." in result.stderr
    assert f"Created the folder {out} for the report." in result.stderr
    again = runner.invoke(cli, ["--db", f"sqlite:///{db}", "report", "--out", str(out), "--no-chart"])
    assert again.exit_code == 0 and "Created the folder" not in again.stderr


def test_a_sqlite_file_that_cannot_be_opened_gets_a_hint_about_its_folder_not_a_server(runner, tmp_path):
    from planner.cli import cli

    result = runner.invoke(cli, ["--db", f"sqlite:///{tmp_path}", "prices"])  # a folder, not a file
    assert result.exit_code == 1
    assert f"Hint: the folder {tmp_path.parent} and the file in it must be writable" in result.stderr
    assert "server" not in result.stderr


@pytest.mark.parametrize("command", [["export"], ["prices", "--format", "csv"]])
def test_a_reader_that_stops_early_ends_the_command_quietly_with_exit_0(tmp_path, command):
    """`planner export | head -1`: the reader closed its end; the command stops, says nothing, exits 0."""
    import os
    import subprocess
    import sys

    db = f"sqlite:///{tmp_path / 'p.db'}"
    env = {**os.environ, "PLANNER_DATA_DIR": str(tmp_path / "data")}
    planner = [sys.executable, "-m", "planner", "--db", db]
    subprocess.run([*planner, "prices"], env=env, capture_output=True, check=True)  # loads the snapshot
    proc = subprocess.Popen([*planner, *command], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.close()  # as `head` does once it has its line
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 0, stderr
    assert stderr.decode().strip() in ("", "Database empty: loaded the bundled snapshot")  # no traceback
    assert b"Traceback" not in stderr and b"Error" not in stderr


def test_json_and_csv_write_booleans_timestamps_and_counts_the_same_way():
    import datetime as dt
    from decimal import Decimal

    from planner.output import csv_text, dumps_json

    row = {
        "sold_out": False,
        "observed_at": dt.datetime(2026, 11, 30, 2, 0),  # naive: UTC, as the database stores it
        "next_run": dt.datetime(2026, 12, 2, 2, 0, tzinfo=dt.timezone(dt.timedelta(hours=8))),
        "day": dt.date(2026, 11, 30),
        "gpu_count": 8.0,
        "price": Decimal("12948.000000"),
        "cny_per_gpu_hour": 17.736986,
    }
    assert json.loads(dumps_json(row)) == {
        "sold_out": False,
        "observed_at": "2026-11-30T02:00:00Z",
        "next_run": "2026-12-02T02:00:00+08:00",
        "day": "2026-11-30",
        "gpu_count": 8,
        "price": 12948,
        "cny_per_gpu_hour": 17.736986,
    }
    assert csv_text([row], list(row)).splitlines()[1] == (
        "false,2026-11-30T02:00:00Z,2026-12-02T02:00:00+08:00,2026-11-30,8,12948,17.736986"
    )


def test_the_report_csv_files_write_booleans_and_timestamps_as_the_commands_do(tmp_path):
    import pandas as pd

    from reports.csvfile import write_csv

    frame = pd.DataFrame({"from_snapshot": [True], "observed_at_utc": [pd.Timestamp("2026-11-30 02:00")]})
    text = write_csv(frame, tmp_path / "x.csv").read_text(encoding="utf-8-sig")
    assert text.splitlines()[1] == "true,2026-11-30T02:00:00Z"
