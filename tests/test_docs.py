"""The documentation stays true: every command is in the reference, and every promise names tests that exist."""

from __future__ import annotations

import re
from pathlib import Path

import click

from planner.cli import COMMANDS, cli

ROOT = Path(__file__).resolve().parents[1]


def read(path: Path) -> str:
    return path.read_text(encoding="utf-8")


# ---- the command reference


def test_every_command_is_in_the_reference():
    reference = read(ROOT / "docs" / "commands.md")
    for name in COMMANDS:
        assert f"`planner {name}" in reference, name
        assert re.search(rf"^#+ .*`planner {name}`", reference, re.M), f"no section for planner {name}"


def test_every_subcommand_of_a_group_is_in_the_reference():
    reference = read(ROOT / "docs" / "commands.md")
    ctx = click.Context(cli)
    for name in COMMANDS:
        command = cli.get_command(ctx, name)
        if isinstance(command, click.Group):
            for sub in command.commands:
                assert f"planner {name} {sub}" in reference, f"planner {name} {sub}"


# ---- the promises


def test_every_promise_names_tests_that_exist():
    section = read(ROOT / "docs" / "promises.md").split("# What the planner promises", 1)[1]
    rows = [
        line for line in section.splitlines() if line.startswith("| ") and not line.startswith("| promise")
    ]
    assert len(rows) >= 14
    for row in rows:
        files = re.findall(r"`(tests/[\w/]+\.py)`", row)
        assert files, row
        for name in files:
            assert (ROOT / name).is_file(), name
