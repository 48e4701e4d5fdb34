"""A table of bad command lines and bad settings: each is one ``Error:`` line, a hint, a non-zero exit
(2 for a usage mistake, 1 when the database cannot be reached), and never a traceback.

The table runs in-process (click's runner, on SQLite and PostgreSQL); a sample also runs as a real
``planner`` process, so what a user's terminal shows is checked too.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.cli import assert_one_line_error

ROOT = Path(__file__).resolve().parents[2]

A = ["--gpu", "A100", "--hours", "5"]  # a valid quote, to spoil one option at a time
W = ["--params", "7B", "--tokens", "1B", "--task", "lora"]  # a valid workload
T = ["--gpu", "RTX4090"]  # a valid tco GPU


# (command line, exit code, what the error says)
BAD_LINES: list = [
    # unknown names
    (["quote", "--gpu", "Z9", "--hours", "5"], 2, "unknown GPU 'Z9'"),
    (["prices", "--gpu", "H8OO"], 2, "unknown GPU 'H8OO'"),
    (["plan", *W, "--gpu", "Q1"], 2, "unknown GPU 'Q1'"),
    (["tco", "--gpu", "A100", "--hours", "10"], 2, "ambiguous GPU 'A100'"),
    (["estimate", *W, "--gpu", "A100"], 2, "ambiguous GPU 'A100'"),
    (["prices", "--provider", "aws"], 2, "unknown provider 'aws'"),
    (["refresh", "--provider", "azure"], 2, "unknown provider 'azure'"),
    (["report", "--provider", "gcp"], 2, "unknown provider 'gcp'"),
    (["runs", "--provider", "tencnet"], 2, "unknown provider 'tencnet'"),
    (["prices", "--billing", "hourlyish"], 2, "unknown billing mode 'hourlyish'"),
    (["plan", *W, "--billing", "weeklyy"], 2, "unknown billing mode 'weeklyy'"),
    (["estimate", "--params", "7B", "--task", "finetune"], 2, "unknown task 'finetune'"),
    (["estimate", "--params", "7B", "--task", "lora", "--precision", "fp2"], 2, "unknown precision 'fp2'"),
    (
        ["tco", *T, "--hours", "10", "--price-basis", "mean"],
        2,
        "'mean' is not one of 'latest', 'median', 'min'",
    ),
    # hours, GPUs, days: negative, zero, huge, not numbers
    (["quote", "--gpu", "A100", "--hours", "0"], 2, "--hours must be positive"),
    (["quote", "--gpu", "A100", "--hours", "1e400"], 2, "--hours '1e400' is far too large"),
    (["quote", "--gpu", "A100", "--hours", "nan"], 2, "--hours 'nan' is not finite"),
    (["quote", "--gpu", "A100", "--hours", "1e30"], 2, "more than ten years"),
    (["quote", "--gpu", "A100", "--hours", "1e-20"], 2, "--hours '1e-20' is too small to mean anything"),
    (["quote", "--gpu", "A100", "--hours", "5h"], 2, "--hours '5h' is not a number"),
    (["quote", *A, "--gpus", "-1"], 2, "--gpus must be positive"),
    (["quote", *A, "--gpus", "100000000000"], 2, "--gpus must be between 1"),
    (["quote", *A, "--gpus", "two"], 2, "--gpus 'two' is not a number"),
    pytest.param(["quote", *A, "--days", "0"], 2, "--days must be positive"),
    pytest.param(["quote", *A, "--days", "-3"], 2, "--days must be positive"),
    (["quote", *A, "--days", "1e12"], 2, "--days 1000000000000 is more than ten years"),
    pytest.param(["quote", *A, "--top", "0"], 2, "--top must be positive"),
    (["history", "--gpu", "A100", "--days", "0"], 2, "0 is not in the range"),
    (["history", "--gpu", "A100", "--days", "100000000"], 2, "100000000 is not in the range"),
    (["runs", "--limit", "0"], 2, "0 is not in the range"),
    (["schedule", "--list", "--count", "0"], 2, "0 is not in the range"),
    # parameters and tokens
    (["estimate", "--params", "0", "--task", "lora"], 2, "--params must be positive"),
    (["estimate", "--params", "-7B", "--task", "lora"], 2, "--params must be positive"),
    (["estimate", "--params", "7X", "--task", "lora"], 2, "--params '7X' is not a number"),
    (["estimate", "--params", "1e400", "--task", "lora"], 2, "--params '1e400' is far too large"),
    (["estimate", "--params", "nan", "--task", "lora"], 2, "--params 'nan' is not finite"),
    (["estimate", "--params", "1e20", "--task", "full", "--gpu", "RTX4090"], 2, "is more than 100.0T"),
    (["estimate", "--params", "7B", "--task", "lora", "--tokens", "-1B"], 2, "--tokens must be positive"),
    (["estimate", "--params", "7B", "--task", "lora", "--tokens", "0"], 2, "--tokens must be positive"),
    (["plan", "--params", "7B", "--tokens", "1e30", "--task", "lora"], 2, "is more than 1000.0T"),
    (["estimate", "--params", "7B", "--task", "lora", "--seq-len", "0"], 2, "--seq-len must be positive"),
    (["estimate", "--params", "7B", "--task", "lora", "--batch", "-1"], 2, "--batch must be positive"),
    (
        ["estimate", "--params", "7B", "--task", "inference", "--kv-heads", "0"],
        2,
        "--kv-heads must be positive",
    ),
    (["plan", *W, "--gpus-max", "0"], 2, "--gpus-max must be positive"),
    (["plan", *W, "--budget", "-5"], 2, "--budget must be positive"),
    (["plan", *W, "--budget", "abc"], 2, "--budget 'abc' is not a number"),
    (["plan", *W, "--deadline-hours", "0"], 2, "--deadline-hours must be positive"),
    (["tco", *T, "--hours", "-10"], 2, "--hours must be positive"),
    (["tco", *T, "--hours", "1e300"], 2, "--hours '1e300' is far too large"),
    pytest.param(["tco", *T, "--utilization", "2"], 2, "--utilization must be between 0 and 1"),
    pytest.param(["tco", *T, "--hours", "10", "--years", "0"], 2, "--years must be more than 0"),
    (["tco", *T, "--hours", "10", "--pue", "0.5"], 2, "--pue must be at least 1"),
    pytest.param(
        ["tco", *T, "--hours", "10", "--resale", "3"],
        2,
        "--resale must be between 0 and 1",
    ),
    (["tco", *T, "--hours", "10", "--purchase-price", "-1"], 2, "--purchase-price must be positive"),
    pytest.param(["tco", *T, "--hours", "10", "--rent-price", "0"], 2, "must be more than 0"),
    # impossible combinations and missing pieces
    (["quote", "--gpu", "A100", "--hours", "50", "--days", "2"], 2, "50 hours do not fit in 2 days"),
    (["tco", *T, "--hours", "10", "--utilization", "0.5"], 2, "give --hours or --utilization, exactly one"),
    (["tco", *T], 2, "give --hours or --utilization, exactly one"),
    (["estimate", "--params", "7B", "--task", "lora", "--mfu", "0.5"], 2, "--mfu changes only the hours"),
    # issue 27: --tokens or a serving load (--concurrency), so the plan, not click, asks for one
    (["plan", "--params", "7B", "--task", "lora"], 2, "a plan needs the tokens the job processes"),
    (["schedule", "--once", "--list"], 2, "--once and --list do not go together"),
    (["report", "--email"], 2, "--email without an address needs [email] recipients"),
    (["report", "--email", "notanaddress"], 2, "'notanaddress' is not an e-mail address"),
    # files
    (["import", "{tmp}"], 2, "Is a directory"),
    (
        ["export", "--out", "/nonexistent/folder/prices.csv"],
        2,
        "cannot write '/nonexistent/folder/prices.csv'",
    ),
    (["refresh", "--from-raw", "/nonexistent/raw"], 2, "does not exist"),
    # databases that cannot be used
    (["--db", "nonsense://", "prices"], 2, "cannot use database URL 'nonsense://'"),
    (["--db", "mysql+pymysql://x@127.0.0.1/db", "prices"], 2, "is not installed"),
    (["--db", "postgresql+psycopg://nobody@127.0.0.1:1/none", "quote", *A], 1, "cannot open database"),
    (["--db", "sqlite:////", "prices"], 1, "cannot open database sqlite:////"),
]

# (settings file content, command, what the error says); the file is passed with --config
BAD_CONFIGS: list[tuple[str | bytes, list[str], str]] = [
    ("[quote]\ntop = 'ten'\n", ["prices"], "setting 'quote.top' must be a whole number"),
    ("[database]\nurl = 5\n", ["prices"], "setting 'database.url' must be a string"),
    ("[http]\nretries = -1\n", ["refresh"], "setting 'http.retries' must be between 0 and 10"),
    ("[http]\nread_timeout_s = 0\n", ["refresh"], "setting 'http.read_timeout_s' must be between"),
    ("[refresh]\nprovider_timeout_s = -1\n", ["refresh"], "'refresh.provider_timeout_s' must be between"),
    ("[refresh]\nconcurrency = 0\n", ["refresh"], "'refresh.concurrency' must be between 1 and 16"),
    (
        "[email]\nsmtp_port = 70000\n",
        ["report", "--email", "a@example.com"],
        "'email.smtp_port' must be between",
    ),
    ("[quote]\nhistory_days = 100000000\n", ["quote", *A], "'quote.history_days' must be between"),
    ("[fx]\nUSD = -7.1\n", ["prices"], "setting 'fx.USD' must be between"),
    ("[fx]\nUSD = nan\n", ["prices"], "setting 'fx.USD' must be between"),
    ("[providers.aliyun]\nmin_interval_s = -1\n", ["refresh"], "'providers.aliyun.min_interval_s' must be"),
    ("[schedule]\nmisfire_grace_s = -1\n", ["schedule", "--list"], "'schedule.misfire_grace_s' must be"),
    (
        "[schedule]\ntimezone = 'Mars/Olympus'\n",
        ["schedule", "--list"],
        "'Mars/Olympus' is not a known time zone",
    ),
    ("[schedule]\ncron = '* * *'\n", ["schedule", "--list"], "has 3 field(s), not 5"),
    ("[quote]\ntpo = 3\n", ["prices"], "unknown setting 'quote.tpo'"),
    ("[providers]\nazure = 1\n", ["prices"], "unknown setting 'providers.azure'"),
    ("[quote\ntop = 3\n", ["prices"], "is not valid TOML"),
    (b"\xff\xfe[\x00q\x00", ["prices"], "is not UTF-8 text"),
    (
        "[email]\nssl = true\nstarttls = true\n",
        ["report", "--email", "a@example.com"],
        "ssl and starttls are both true",
    ),
]


def _line_id(case: object) -> str:
    args = case.values[0] if hasattr(case, "values") else case[0]
    return " ".join(args)[:60]


@pytest.mark.parametrize("args, code, fragment", BAD_LINES, ids=[_line_id(c) for c in BAD_LINES])
def test_a_bad_command_line_is_one_error_line_with_a_hint(run_cli, runner, tmp_path, args, code, fragment):
    from planner.cli import cli

    args = [a.replace("{tmp}", str(tmp_path)) for a in args]
    if args[0] == "--db":  # its own database URL, not the test database
        result = runner.invoke(cli, args)
    else:
        result = run_cli(*args)
    assert_one_line_error(result, code, fragment)


@pytest.mark.parametrize(
    "content, args, fragment", BAD_CONFIGS, ids=[fragment[:40] for _, _, fragment in BAD_CONFIGS]
)
def test_a_bad_setting_is_one_error_line_naming_the_file_and_setting(
    run_cli, tmp_path, content, args, fragment
):
    path = tmp_path / "team.toml"
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    result = run_cli("--config", str(path), *args)
    assert_one_line_error(result, 2, fragment)
    if "setting" in fragment:
        assert str(path) in result.stderr  # the file is named


def test_the_table_is_long_enough():
    assert len(BAD_LINES) + len(BAD_CONFIGS) >= 30


def test_a_sqlite_file_in_a_folder_that_cannot_be_made_is_one_line(runner):
    from planner.cli import cli

    result = runner.invoke(cli, ["--db", "sqlite:////proc/no/such/folder/planner.db", "prices"])
    assert_one_line_error(result, 1, "cannot open database")


SAMPLE = [
    (["quote", "--gpu", "Z9", "--hours", "5"], 2),
    (["history", "--gpu", "A100", "--days", "100000000"], 2),
    (["export", "--out", "/nonexistent/folder/prices.csv"], 2),
    (["--config", "{bad_config}", "prices"], 2),
    (["--db", "postgresql+psycopg://nobody@127.0.0.1:1/none", "prices"], 1),
]


@pytest.mark.parametrize(
    "args, code",
    # one real process in the fast group, the rest in the slow one (each costs a Python start-up)
    [
        pytest.param(a, c, id=" ".join(a)[:40], marks=pytest.mark.slow if i else ())
        for i, (a, c) in enumerate(SAMPLE)
    ],
)
def test_a_real_planner_process_prints_no_traceback(tmp_path, args, code):
    bad_config = tmp_path / "bad.toml"
    bad_config.write_bytes(b"\xff\xfe garbage")
    env = {**os.environ, "HOME": str(tmp_path), "PLANNER_DATA_DIR": str(tmp_path / "data")}
    env.pop("PLANNER_DATABASE_URL", None)
    argv = [a.replace("{bad_config}", str(bad_config)) for a in args]
    done = subprocess.run(
        [sys.executable, "-m", "planner", *argv],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == code, done.stderr
    assert "Traceback" not in done.stderr and done.stderr.startswith("Error: ") or "\nError: " in done.stderr
    assert done.stdout == ""
