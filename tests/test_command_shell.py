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
    result = run_cli("quote", "--gpu", "A100", "--hours", "-5")
    assert result.exit_code == 2
    assert "Error: --hours must be a positive number" in result.output
    assert "Hint: e.g. --hours 500" in result.output


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
    result = run_cli("prices", "--gpu", "H100")  # the bundled snapshot has H800 prices, no H100
    assert result.exit_code == 0, result.output
    assert "No prices match these filters. Hint: add --include-variants (H800-80GB stored)." in result.output
    assert "H800-80GB" in run_cli("prices", "--gpu", "H100", "--include-variants").output


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
