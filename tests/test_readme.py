"""The README is the front door: its set-up commands are the ones CI runs, and its command list is true."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def setup_commands() -> list[str]:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Set-up on a fresh machine", 1)[1].split("\n## ", 1)[0]
    return [block.strip() for block in re.findall(r"```\n(.*?)```", section, re.S)]


def test_readme_has_two_setup_commands_and_ci_runs_them_verbatim():
    commands = setup_commands()
    assert len(commands) == 2
    assert "planner quote --gpu A100 --hours 500" in commands[0]
    assert "pytest" in commands[1] and "[test]" in commands[1]
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    for command in commands:
        assert command in ci.splitlines(), command


def test_readme_documents_every_command():
    from planner.cli import COMMANDS

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for name in COMMANDS:
        assert f"`planner {name}`" in readme or f"`planner {name}" in readme, name


def test_every_promise_names_tests_that_exist():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## What the planner promises", 1)[1].split("\n## ", 1)[0]
    rows = [
        line for line in section.splitlines() if line.startswith("| ") and not line.startswith("| promise")
    ]
    assert len(rows) >= 14
    for row in rows:
        files = re.findall(r"`(tests/[\w/]+\.py)`", row)
        assert files, row
        for name in files:
            assert (ROOT / name).is_file(), name
