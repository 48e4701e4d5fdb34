"""Commands are thin shells: the library speaks in quantities, the command line in the flags typed;
every command prints through one ``emit``; answers that match nothing say what would."""

from __future__ import annotations

import json

import pytest

from planner.answers.quote import QuoteRequest, validate
from planner.errors import QuantityError, UsageError
from planner.pricing.cost import Job
from tests.helpers.cli import line_of


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


def _library_errors():
    from planner import catalog
    from planner.answers.tco import check_tco
    from planner.views.plot import check_plot_path
    from planner.workload.architectures import get_spec
    from planner.workload.estimate import estimate
    from planner.workload.memory import check_task_precision

    a100 = catalog.get_model("A100-80GB")
    return [
        (lambda: estimate(params=7e9, model="qwen2.5-7b", task="full"), "give model or params, not both"),
        (lambda: estimate(task="full"), "e.g. model qwen2.5-7b, or params 7B for another model"),
        (lambda: estimate(params=7e9, task="full", lora_rank=64), "lora rank applies to task lora or qlora"),
        (lambda: check_task_precision("qlora", "bf16"), "for an 8-bit or 16-bit base use task lora"),
        (lambda: get_spec("zzzz-unknown"), "for another model give params N"),
        (lambda: check_tco(a100, None, None, 1, 3), "give hours or utilization, exactly one"),
        (lambda: check_plot_path("history.gif"), "e.g. plot history.png"),
    ]


@pytest.mark.parametrize("case", range(7))
def test_library_errors_name_quantities_by_their_plain_names(case):
    from planner.errors import PlannerError

    call, words = _library_errors()[case]
    with pytest.raises(PlannerError) as err:
        call()
    text = f"{err.value.message} / {err.value.hint}"
    assert words in text and "--" not in text


def test_library_notes_name_quantities_by_their_plain_names():
    from planner import catalog
    from planner.workload.estimate import estimate

    e = estimate(
        model="qwen2.5-7b", task="inference", seq_len=200_000, tokens=1e6, gpu=catalog.get_model("A100-80GB")
    )
    assert any(n.startswith("seq len 200000 is longer than") for n in e.notes), e.notes
    assert any(n.endswith("raise batch") for n in e.notes), e.notes
    assert not any("--" in n for n in e.notes)
    assert "(kv heads)" in estimate(params=7e9, task="inference", kv_heads=8).assumed[0]
    assert "give today's with purchase price" in catalog.stale_purchase_price_note(
        catalog.get_model("A100-80GB"), __import__("datetime").date(2040, 1, 1)
    )


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (
            ["estimate", "--model", "qwen2.5-7b", "--params", "7B", "--task", "full"],
            "give --model or --params",
        ),
        (
            ["estimate", "--params", "7B", "--task", "full", "--lora-rank", "8"],
            "--lora-rank applies to --task",
        ),
        (["estimate", "--model", "zzzz-unknown", "--task", "full"], "for another model give --params N"),
        (["tco", "--gpu", "A100-80GB", "--rent-price", "10"], "--hours or --utilization, exactly one"),
        (["history", "--gpu", "A100", "--plot", "h.gif"], "Hint: e.g. --plot history.png"),
    ],
)
def test_the_command_line_words_library_errors_with_its_flags(runner, args, words):
    from planner.cli import cli

    result = runner.invoke(cli, args)
    assert result.exit_code != 0
    assert words in result.stderr, result.stderr


def test_the_command_line_words_library_notes_with_its_flags(runner):
    from planner.cli import cli

    args = [
        "estimate",
        "--model",
        "qwen2.5-7b",
        "--task",
        "inference",
        "--seq-len",
        "200000",
        "--tokens",
        "1M",
    ]
    table = runner.invoke(cli, [*args, "--gpu", "A100-80GB"])
    assert table.exit_code == 0, table.output
    assert "Note: --seq-len 200000 is longer than" in table.stdout
    assert "raise --batch" in table.stdout
    data = json.loads(runner.invoke(cli, [*args, "--gpu", "A100-80GB", "--format", "json"]).stdout)
    assert any(n.startswith("--seq-len 200000 is longer") for n in data["notes"])
    assumed = runner.invoke(cli, ["estimate", "--params", "7B", "--task", "inference", "--kv-heads", "8"])
    assert "(--kv-heads)" in assumed.stdout
    tco = runner.invoke(
        cli, ["tco", "--gpu", "RTX3090-24GB", "--hours", "1000"]
    )  # its catalog price is of 2020
    assert "give today's with --purchase-price" in tco.stdout, tco.output


def test_the_command_words_a_quantity_as_the_flag_typed(run_cli):
    result = run_cli("quote", "--gpu", "A100-80GB", "--hours", "1K", "--gpus", "0.5K", "--days", "0")
    assert result.exit_code == 2
    assert "Error: --days must be positive" in result.output  # read by the option type
    result = run_cli("quote", "--gpu", "A100-80GB", "--hours", "1K", "--gpus", "200K")
    assert result.exit_code == 2
    error = line_of(result.stderr, "Error:")  # by the library
    assert error.startswith("Error: --gpus ") and "between 1 and 50000" in error and "got 200000" in error
    assert "Hint: e.g. --gpus 8" in result.output


def test_plan_never_names_a_flag_that_was_not_given(run_cli):
    # A deadline under an hour is refused since issue 25; 10T tokens in 1 h needs more than 100,000 GPUs.
    result = run_cli(
        "plan", "--model", "qwen2.5-7b", "--task", "pretrain", "--tokens", "10T", "--deadline-hours", "1"
    )
    assert result.exit_code == 1, result.output  # no option: nothing to recommend (docs/commands.md)
    assert "--gpus " not in result.output
    assert "to finish in 1 h" in result.output and "the 50,000 a plan considers" in result.output


def test_a_quantity_error_about_no_flag_of_the_command_keeps_its_plain_name():
    from planner.commands.flags import as_typed
    from planner.commands.plan import plan

    err = QuantityError("gpus", "204.9K is more than 100.0K", "8")
    assert as_typed(err, plan) is err  # plan has --gpus-max, not --gpus
    worded = as_typed(QuantityError("gpus_max", "must be from 1 to 100,000, got 0", "8"), plan)
    assert worded.exit_code == UsageError.exit_code
    assert worded.message.split()[0] == "--gpus-max" and worded.message.endswith("got 0")
    assert worded.hint == "e.g. --gpus-max 8"


def test_no_prices_match_says_add_include_variants_when_a_variant_is_stored(run_cli):
    # the bundled snapshot has AutoDL H800 prices and no AutoDL H100 (its H100 prices are Tencent's and
    # Volcengine's)
    result = run_cli("prices", "--gpu", "H100", "--provider", "autodl")
    assert result.exit_code == 0, result.output
    assert "No prices match" in result.output
    assert "add --include-variants" in result.output and "(H800-80GB stored)" in result.output
    assert (
        "H800-80GB" in run_cli("prices", "--gpu", "H100", "--provider", "autodl", "--include-variants").output
    )


@pytest.mark.parametrize(
    ("args", "hint"),
    [
        (["prices", "--gpu", "H100", "--provider", "autodl"], "add --include-variants (H800-80GB stored)"),
        (
            ["quote", "--gpu", "H100", "--hours", "10", "--provider", "autodl"],
            "add --include-variants (H800-80GB stored)",
        ),
        (
            [
                "plan",
                "--params",
                "7B",
                "--tokens",
                "1B",
                "--task",
                "lora",
                "--gpu",
                "H100",
                "--provider",
                "autodl",
            ],
            "China variants are stored: H800-80GB (add --gpu H800-80GB)",
        ),
        (["prices", "--gpu", "A10", "--region", "北京"], "regions look like cn-beijing"),
        (["quote", "--gpu", "A10", "--hours", "10", "--region", "北京"], "regions look like cn-beijing"),
        (["quote", "--gpu", "A10", "--hours", "10", "--region", "beijing"], "regions look like cn-beijing"),
    ],
)
def test_quote_and_plan_give_the_hints_prices_gives_and_no_option_exits_1(run_cli, args, hint):
    # One place words them (planner.views.notes.no_match_line over planner.answers.near): a listing
    # that is empty is an answer (exit 0); a quote or a plan with nothing to recommend is not (exit 1).
    result = run_cli(*args)
    assert result.exit_code == (0 if args[0] == "prices" else 1), result.output
    assert f"Hint: {hint}" in line_of(result.stdout, "No prices match")
    if args[0] == "quote":
        doc = json.loads(run_cli(*args, "--format", "json").stdout)
        assert doc["options"] == [] and doc["would_match"]


def test_no_prices_match_says_what_regions_look_like(run_cli):
    result = run_cli("prices", "--region", "shenzhen")
    hint = result.output.split("Hint: ")[1]
    assert hint.startswith("regions look like") and "cn-shenzhen" in hint
    assert "No prices match these filters.\n" in run_cli("prices", "--region", "atlantis").output


def test_the_database_empty_line_is_printed_once_to_stderr(runner, db_url, tmp_path):
    from planner.cli import cli

    result = runner.invoke(cli, ["--db", db_url, "prices", "--format", "json"])
    assert result.exit_code == 0
    assert result.stderr.count("loaded the bundled snapshot") == 1
    json.loads(result.stdout)  # standard output stays pure JSON


def test_runs_shows_a_run_running_for_twice_the_timeout_as_interrupted():
    import datetime as dt

    from planner.ingest.runs import seen_status

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
    from planner.views.notes import star_note

    notes = [
        "GPU inferred from the gn7e family, not stated by Aliyun",
        "GPU inferred from the gn6i family, not stated by Aliyun",
        "GPU inferred from the gn7e family, not stated by Aliyun",
        "A100 memory size not stated by the source; assumed 80 GB",
        "A100 memory size not stated by the source; assumed 40 GB",
        None,
        "listed as 'GPU' only",
    ]
    note = star_note(notes)
    assert note.startswith("* ") and note.count("; ") == 2  # three reasons, each once
    assert note.count("gn7e") == 1 and "(gn6i, gn7e)" in note  # the families, merged
    assert note.count("A100 memory") == 1 and "40 or 80 GB" in note  # the sizes, merged
    assert note.count("listed as 'GPU' only") == 1
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


def test_the_default_data_folder_is_created_quietly_on_a_first_run(runner, isolated_home, monkeypatch):
    """Nobody typed the default database's folder: a first run says only that it loaded the snapshot."""
    from planner.cli import cli

    data = isolated_home / "planner-data"
    assert not data.exists()
    result = runner.invoke(cli, ["prices", "--gpu", "A100-80GB"])
    assert result.exit_code == 0, result.output
    assert (data / "planner.db").is_file()
    assert "Created the folder" not in result.stderr
    assert result.stderr.startswith("Database empty: loaded the bundled")


def test_a_database_folder_named_in_the_environment_is_created_with_a_line(runner, tmp_path, monkeypatch):
    from planner.cli import cli

    db = tmp_path / "named" / "planner.db"
    monkeypatch.setenv("PLANNER_DATABASE_URL", f"sqlite:///{db}")
    result = runner.invoke(cli, ["prices", "--gpu", "A100-80GB"])
    assert result.exit_code == 0, result.output
    first = result.stderr.splitlines()[0]
    assert first.startswith(f"Created the folder {db.parent} ") and "database" in first


def test_a_sqlite_file_that_cannot_be_opened_gets_a_hint_about_its_folder_not_a_server(runner, tmp_path):
    from planner.cli import cli

    result = runner.invoke(cli, ["--db", f"sqlite:///{tmp_path}", "prices"])  # a folder, not a file
    assert result.exit_code == 1
    hint = line_of(result.stderr, "Hint:")
    assert f"the folder {tmp_path.parent} " in hint and "writable" in hint
    assert "server" not in result.stderr


@pytest.mark.slow  # two real planner processes each
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
    said = stderr.decode().strip().splitlines()
    assert said == [] or (len(said) == 1 and said[0].startswith("Database empty:"))  # no traceback
    assert b"Traceback" not in stderr and b"Error" not in stderr


def test_json_and_csv_write_booleans_and_counts_the_same_way_and_one_moment_in_two_spellings():
    """JSON spells a time ISO 8601 with Z; CSV, which people open in a spreadsheet, as the same UTC moment
    without T or zone (a spreadsheet reads "...T...Z" as text), an aware one converted to UTC; money to
    2 places in CSV, full precision in JSON."""
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
        "false,2026-11-30 02:00:00,2026-12-01 18:00:00,2026-11-30,8,12948.00,17.74"
    )
    # A record that spelt its time for JSON already (Offer.to_dict) reaches the CSV spelt for a sheet.
    assert csv_text([{"observed_at": "2026-11-30T02:00:00Z"}], ["observed_at"]).splitlines()[1] == (
        "2026-11-30 02:00:00"
    )


def test_the_report_csv_files_write_booleans_and_timestamps_as_the_commands_do(tmp_path):
    import pandas as pd

    from reports.csvfile import write_csv

    frame = pd.DataFrame({"from_snapshot": [True], "observed_at_utc": [pd.Timestamp("2026-11-30 02:00")]})
    text = write_csv(frame, tmp_path / "x.csv").read_text(encoding="utf-8-sig")
    assert text.splitlines()[1] == "true,2026-11-30 02:00:00"
