"""One rule for exit codes (docs/commands.md): 0 answered, 1 failed (or nothing to recommend), 2 a usage
mistake to fix in the words typed, the settings or the environment, 130 interrupted. And the
papercuts a new user met: each says what is wrong, never what is not."""

from __future__ import annotations

import errno
import json
import os
import signal
import subprocess
import sys
import time

import pytest
from sqlalchemy import select

from planner.errors import PlannerError, UsageError, write_error
from tests.helpers.replay import RAW
from tests.helpers.servers import FaultServer

QUOTE = ("quote", "--gpu", "A100", "--hours", "10")


def _config(tmp_path, text: str) -> str:
    path = tmp_path / "settings.toml"
    path.write_text(text, encoding="utf-8")
    return str(path)


# (arguments, exit code, what standard error says); "{tmp}" is the test's folder, "{cfg}" a settings file
# with an e-mail login and one WeCom channel.
RULE = [
    # usage: the words typed, the settings or the environment are to fix
    ((), 2, "Error: Missing command."),  # `--db URL` and no command; bare `planner` prints the help
    (("report", "--out", "/dev/null"), 2, "cannot write the report to '/dev/null': it is not a folder"),
    (("export", "--out", "/nonexistent/x.csv"), 2, "cannot write '/nonexistent/x.csv'"),
    (("--config", "{cfg}", "alerts", "test", "team"), 2, "PLANNER_WEBHOOK_TEAM is not set"),
    (
        ("--config", "{cfg}", "report", "--out", "{tmp}/r", "--email", "a@example.com"),
        2,
        "PLANNER_SMTP_PASSWORD",
    ),
    ((*QUOTE, "--hours", "20"), 2, "--hours given more than once: give it once"),
    # nothing to recommend: not an answer to act on
    (("quote", "--gpu", "H100", "--hours", "10", "--provider", "autodl"), 1, ""),
    # answered (an empty listing is an answer)
    (("prices", "--gpu", "H100", "--provider", "autodl"), 0, ""),
    (QUOTE, 0, ""),
]


@pytest.mark.parametrize(("args", "code", "said"), RULE)
def test_one_rule_for_exit_codes(run_cli, tmp_path, monkeypatch, args, code, said):
    monkeypatch.delenv("PLANNER_WEBHOOK_TEAM", raising=False)
    monkeypatch.delenv("PLANNER_SMTP_PASSWORD", raising=False)
    cfg = _config(
        tmp_path,
        '[email]\nsmtp_host = "smtp.example.com"\nusername = "planner"\nsender = "planner@example.com"\n'
        '[channels.team]\nkind = "wecom"\n',
    )
    result = run_cli(*(a.replace("{tmp}", str(tmp_path)).replace("{cfg}", cfg) for a in args))
    assert result.exit_code == code, result.output
    assert said in result.stderr
    assert "Traceback" not in result.output and "Error: Usage:" not in result.output


def test_a_write_error_is_usage_for_a_wrong_path_and_a_failure_for_the_system():
    for number in (errno.ENOENT, errno.ENOTDIR, errno.EEXIST, errno.EACCES, errno.EROFS):
        assert write_error("cannot write", OSError(number, "x")).exit_code == UsageError.exit_code == 2
    for number in (errno.ENOSPC, errno.EIO, errno.EDQUOT):
        assert write_error("cannot write", OSError(number, "x")).exit_code == PlannerError.exit_code == 1


@pytest.mark.parametrize(
    ("args", "twice"),
    [
        ((*QUOTE, "--hours", "20"), "--hours"),
        ((*QUOTE, "--hours=20"), "--hours"),
        ((*QUOTE, "--format", "json", "--format", "csv"), "--format"),
        (("tco", "--gpu", "H800", "--gpus", "8", "--gpus", "16", "--hours", "10"), "--gpus"),
        (("estimate", "--params", "7B", "--task", "lora", "--task", "full"), "--task"),
        (("history", "--gpu", "A100", "--days", "7", "--days", "30"), "--days"),
        (
            (
                "plan",
                "--params",
                "7B",
                "--task",
                "lora",
                "--tokens",
                "1B",
                "--checkpointing",
                "--no-checkpointing",
            ),
            "--checkpointing",
        ),
        (("alerts", "check", "--format", "json", "--format", "csv"), "--format"),
        (("--db", "sqlite:///a.db", "--db", "sqlite:///b.db", "prices"), "--db"),
    ],
)
def test_a_scalar_option_given_twice_is_refused_in_every_command(run_cli, args, twice):
    result = run_cli(*args)
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith(f"Error: {twice} given more than once"), result.stderr


def _scalar_options(command, path=()):
    """(command words, an option of it that takes one value) for every command and group command."""
    import click

    if isinstance(command, click.Group):
        for name in command.list_commands(None):
            yield from _scalar_options(command.get_command(None, name), (*path, name))
        return
    for param in command.params:
        if isinstance(param, click.Option) and not (param.multiple or param.count or param.is_flag):
            yield path, param.opts[-1]
            return


def test_every_command_refuses_each_of_its_scalar_options_given_twice(runner):
    from planner.cli import COMMANDS, cli

    found = []
    for name in COMMANDS:
        for words, option in _scalar_options(cli.get_command(None, name), (name,)):
            found.append(words)
            result = runner.invoke(cli, [*words, option, "1", option, "2"])
            assert result.exit_code == 2, (words, option, result.output)
            assert result.stderr.startswith(f"Error: {option} given more than once"), (words, result.stderr)
    assert len(found) >= len(COMMANDS)  # every command (and alerts' own) has one, and each was tried


def test_repeatable_options_and_switches_may_repeat(run_cli):
    listed = run_cli("prices", "--provider", "aliyun", "--provider", "tencent", "--gpu", "A10", "--gpu", "T4")
    assert listed.exit_code == 0, listed.output
    assert run_cli("alerts", "check", "--dry-run", "--dry-run").exit_code == 0


def test_the_options_of_planner_itself_after_a_command_say_where_they_go(run_cli):
    result = run_cli(*QUOTE, "--db", "sqlite:///x.db")
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [
        "Error: --db is an option of planner itself: give it before the command",
        "Hint: planner --db URL quote ...",
    ]
    nested = run_cli("alerts", "check", "--config", "x.toml")
    assert "Hint: planner --config FILE alerts check ..." in nested.stderr and "--days" not in nested.stderr


def test_bare_planner_prints_the_help_not_an_error(runner):
    from planner.cli import cli

    result = runner.invoke(cli, [])
    assert result.exit_code == 2  # no command was given
    assert result.stderr.startswith("Usage: planner") or result.stderr.startswith("Usage: cli")
    assert "Error" not in result.stderr and "Commands:" in result.stderr


def test_a_file_that_is_not_sqlite_is_named_so_not_blamed_on_its_folder(runner, tmp_path):
    from planner.cli import cli

    path = tmp_path / "notes.txt"
    path.write_text("these are my notes, not a database\n" * 20, encoding="utf-8")
    result = runner.invoke(cli, ["--db", f"sqlite:///{path}", "prices"])
    assert result.exit_code == 2, result.output
    assert "the file is not a SQLite database" in result.stderr
    assert "folder" not in result.stderr and "writable" not in result.stderr


def test_the_scope_hint_offers_only_what_scope_takes(run_cli, tmp_path):
    for typo in ("oversea", "overseas"):
        cfg = _config(tmp_path, f'[quote]\nscope = "{typo}"\n')
        result = run_cli("--config", cfg, *QUOTE)
        assert result.exit_code == 2, result.output
        assert "overseas" not in result.stderr.split("Hint:")[1], result.stderr
        assert "mainland" in result.stderr
    refused = run_cli(*QUOTE, "--scope", "overseas")
    assert refused.exit_code == 2 and "'mainland', 'all'" in refused.stderr


def test_mfu_names_only_what_is_missing(run_cli):
    gpu_given = run_cli("estimate", "--params", "7B", "--task", "lora", "--gpu", "A100-80GB", "--mfu", "0.5")
    assert gpu_given.exit_code == 2
    assert "Error: --mfu changes only the hours, which need --tokens\n" in gpu_given.stderr
    out_of_range = run_cli(
        "estimate", "--params", "7B", "--task", "lora", "--gpu", "A100-80GB", "--mfu", "1.5"
    )
    assert "--mfu must be in (0, 1], got 1.5" in out_of_range.stderr and "need" not in out_of_range.stderr


def test_ctrl_c_exits_130_and_marks_the_refresh_runs_interrupted(run_cli, monkeypatch, engine):
    from db.schema import scrape_runs
    from planner.ingest import refresh

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt  # Ctrl-C while a provider's prices are being stored

    monkeypatch.setattr(refresh, "finish", interrupted)
    result = run_cli("refresh", "--from-raw", str(RAW), "--provider", "autodl", "--provider", "tencent")
    assert result.exit_code == 130, result.output
    assert result.stderr.endswith("Interrupted.\n") and "Aborted" not in result.output
    assert "refresh run(s) marked interrupted" in result.stderr
    with engine.connect() as conn:
        runs = conn.execute(select(scrape_runs.c.provider, scrape_runs.c.status, scrape_runs.c.error)).all()
    assert {(p, s) for p, s, _ in runs} == {("autodl", "interrupted"), ("tencent", "interrupted")}
    assert all(e.startswith("interrupted (Ctrl-C or SIGINT)") for _, _, e in runs)


def test_sigint_during_a_refresh_exits_130_with_the_run_marked(db_url, engine, tmp_path):
    from db.schema import scrape_runs

    with FaultServer("tencent", "slow", delay_s=30.0) as server:  # a provider that takes its time
        config = tmp_path / "config.toml"
        config.write_text(
            "[http]\nretries = 0\n"
            f"[providers.tencent]\nbase_url = '{server.base_url}'\nmin_interval_s = 0.0\n",
            encoding="utf-8",
        )
        env = {**os.environ, "PLANNER_DATA_DIR": str(tmp_path / "data"), "HOME": str(tmp_path)}
        env.pop("PLANNER_DATABASE_URL", None)
        process = subprocess.Popen(
            [sys.executable, "-m", "planner", "--db", db_url, "--config", str(config), "refresh"]
            + ["--provider", "tencent", "--no-alerts"],
            cwd=tmp_path,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        deadline = time.monotonic() + 20
        while not server.log and time.monotonic() < deadline:  # the provider has been asked
            time.sleep(0.05)
        assert server.log, "the refresh never reached the provider"
        process.send_signal(signal.SIGINT)
        _out, err = process.communicate(timeout=20)
    assert process.returncode == 130, err
    assert err.rstrip().endswith("Interrupted.") and "Aborted" not in err and "Traceback" not in err
    with engine.connect() as conn:
        statuses = conn.execute(select(scrape_runs.c.status).where(scrape_runs.c.provider == "tencent"))
        assert [s for (s,) in statuses] == ["interrupted"]  # now, not at the next refresh


def test_the_json_of_a_quote_with_nothing_to_recommend_still_prints(run_cli):
    result = run_cli("quote", "--gpu", "H100", "--hours", "10", "--provider", "autodl", "--format", "json")
    assert result.exit_code == 1
    doc = json.loads(result.stdout)
    assert doc["recommendation"] is None and doc["would_match"]["variants"] == ["H800-80GB"]
