"""The README is the front door: its set-up commands are the ones CI runs, and it leads to every docs page.

The pages themselves (the command reference, the promises, links, the commands in code blocks) are
checked by ``tests/project/test_docs.py``.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


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


def test_readme_links_every_docs_page():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    pages = sorted(path.relative_to(ROOT).as_posix() for path in (ROOT / "docs").glob("*.md"))
    assert "docs/commands.md" in pages
    for page in pages:
        assert f"]({page})" in readme, page


def test_readme_stays_a_front_door():
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 250, "move reference material to docs/"
