"""The documentation stays true: every command is in the reference, every promise names tests that exist,
every relative link leads to a file (and heading), and every ``planner ...`` invocation in a code block
of the README or ``docs/*.md`` is a command the CLI has, with options that command takes.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import click
import pytest

from planner.cli import COMMANDS, cli

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
PAGE_IDS = [path.relative_to(ROOT).as_posix() for path in PAGES]

FENCE = re.compile(r"^\s*(```+|~~~+)\s*([\w+-]*)")
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
INLINE_CODE = re.compile(r"(`+)(.+?)\1")
# The program of a shell segment: `planner`, `.venv/bin/planner`, `ExecStart=/srv/x/.venv/bin/planner`.
PROGRAM = re.compile(r"^(?:ExecStart=)?(?:\S*/bin/)?planner$")
SEPARATORS = {"&&", "||", ";", "|", "&", ";;"}


def read(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def split_fences(text: str) -> tuple[list[str], list[tuple[str, list[str]]]]:
    """The lines outside fenced code blocks, and each block as (info string, its lines)."""
    prose: list[str] = []
    blocks: list[tuple[str, list[str]]] = []
    fence: str | None = None
    for line in text.splitlines():
        match = FENCE.match(line)
        if fence is None:
            if match:
                fence = match.group(1)
                blocks.append((match.group(2), []))
            else:
                prose.append(line)
        elif match and match.group(1).startswith(fence) and not match.group(2):
            fence = None
        else:
            blocks[-1][1].append(line)
    assert fence is None, "a code block is never closed"
    return prose, blocks


def logical_lines(lines: list[str]) -> list[str]:
    """Lines with shell continuations (a trailing backslash) joined, and a leading ``$ `` prompt dropped."""
    out: list[str] = []
    pending = ""
    for line in lines:
        if line.rstrip().endswith("\\"):
            pending += line.rstrip()[:-1] + " "
            continue
        out.append(pending + line)
        pending = ""
    if pending:
        out.append(pending)
    return [line.strip().removeprefix("$ ") for line in out]


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = heading.strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    prose, _ = split_fences(read(path))
    return {slug(line.lstrip("#")) for line in prose if re.match(r"#{1,6} ", line)}


def invocations(text: str) -> list[tuple[str, list[str]]]:
    """Every ``planner`` invocation in the code blocks of a page: (the line, its words after the program)."""
    found = []
    for info, block in split_fences(text)[1]:
        if info == "text":  # a diagram, not a shell
            continue
        for line in logical_lines(block):
            if "planner" not in line:
                continue
            lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
            lexer.whitespace_split = True
            lexer.commenters = "#"
            try:
                words = list(lexer)
            except ValueError as err:  # an unbalanced quote: fine in a config line, not in a command
                if re.match(r"(?:\S*/bin/)?planner\s", line):
                    raise AssertionError(f"cannot read {line!r}: {err}") from None
                continue
            segment: list[str] = []
            for word in [*words, ";"]:
                if word in SEPARATORS:
                    if segment and PROGRAM.match(segment[0]):
                        found.append((line, segment[1:]))
                    segment = []
                else:
                    segment.append(word)
    return found


def option_names(command: click.Command, ctx: click.Context) -> set[str]:
    names = set(ctx.help_option_names)
    for param in command.params:
        if isinstance(param, click.Option):
            names.update(param.opts + param.secondary_opts)
    return names


def takes_value(command: click.Command, name: str) -> bool:
    for param in command.params:
        if isinstance(param, click.Option) and name in param.opts + param.secondary_opts:
            return not (param.is_flag or param.count)
    return False


def check_invocation(words: list[str]) -> list[str]:
    """What is wrong with ``planner WORDS`` (nothing: an empty list)."""
    ctx = click.Context(cli)
    problems: list[str] = []
    i = 0
    while i < len(words) and words[i].startswith("-"):  # the root's own options (--db, --config)
        name = words[i].split("=", 1)[0]
        if name not in option_names(cli, ctx):
            problems.append(f"planner has no option {name}")
        i += 1 if "=" in words[i] or not takes_value(cli, name) else 2
    if i >= len(words):
        return problems
    command = cli.get_command(ctx, words[i])
    if command is None:
        return [*problems, f"no command {words[i]!r}"]
    path = f"planner {words[i]}"
    rest = words[i + 1 :]
    if isinstance(command, click.Group):
        sub_ctx = click.Context(command, parent=ctx, info_name=words[i])
        if not rest or rest[0] in sub_ctx.help_option_names:
            return problems if rest else [*problems, f"{path} needs a subcommand"]
        sub = command.get_command(sub_ctx, rest[0])
        if sub is None:
            return [*problems, f"{path} has no subcommand {rest[0]!r}"]
        path, command, ctx, rest = f"{path} {rest[0]}", sub, sub_ctx, rest[1:]
    allowed = option_names(command, ctx)
    for word in rest:
        if word.startswith("-") and word != "-":
            name = word.split("=", 1)[0]
            if name not in allowed:
                problems.append(f"{path} has no option {name}")
    return problems


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


# ---- links


@pytest.mark.parametrize("page", PAGES, ids=PAGE_IDS)
def test_every_relative_link_leads_to_a_file(page):
    prose, _ = split_fences(read(page))
    text = INLINE_CODE.sub("", "\n".join(prose))
    broken = []
    for target in LINK.findall(text):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # https:, mailto:
            continue
        file_part, _, anchor = target.partition("#")
        path = (page.parent / file_part).resolve() if file_part else page
        if not path.exists():
            broken.append(f"{target}: no such file")
        elif anchor and path.suffix == ".md" and anchor not in anchors(path):
            broken.append(f"{target}: no such heading in {path.name}")
    assert broken == []


def test_the_link_check_sees_links_and_headings():
    assert LINK.findall("see [a](docs/a.md#x) and ![b](img.png) `[c](not.md)`") == [
        "docs/a.md#x",
        "img.png",
        "not.md",
    ]
    assert slug(" `planner refresh` — today's prices") == "planner-refresh--todays-prices"


# Repository paths written in a page: `planner/pricing/cost.py`, `tests/fixtures/raw/`, `db/migrations/`
# (not /srv/planner/... or ~/.local/share/planner/..., which are paths on a user's machine).
REPO_PATH = re.compile(r"(?<![\w/~.-])((?:planner|scrapers|db|reports|tests|bench|vocab|docs|\.ci)/[\w./-]*)")


@pytest.mark.parametrize("page", PAGES, ids=PAGE_IDS)
def test_every_repository_path_a_page_names_exists(page):
    missing = sorted(
        {path for path in REPO_PATH.findall(read(page)) if not (ROOT / path.rstrip(".")).exists()}
    )
    assert missing == [], "a module moved? name where it lives now"


def test_the_path_check_tells_repository_paths_from_a_users():
    text = "`planner/pricing/cost.py`, /srv/planner/.venv/bin/planner, ~/.local/share/planner/x, `tests/fixtures/<p>/`"
    assert REPO_PATH.findall(text) == ["planner/pricing/cost.py", "tests/fixtures/"]


# ---- the commands in code blocks


@pytest.mark.parametrize("page", PAGES, ids=PAGE_IDS)
def test_every_planner_line_in_a_code_block_is_a_real_command(page):
    problems = [
        f"{line!r}: {problem}"
        for line, words in invocations(read(page))
        for problem in check_invocation(words)
    ]
    assert problems == []


def test_every_command_has_an_example_in_a_code_block():
    seen = {words[0] for page in PAGES for _, words in invocations(read(page)) if words}
    assert set(COMMANDS) <= seen, "every command has an example the check above reads"


def test_the_command_check_reads_shell_and_finds_mistakes():
    text = "\n".join(
        [
            "```",
            "$ planner quote --gpu A100 \\",
            "    --hours=500 --no-such-flag",
            "export X=1 && .venv/bin/planner alerts nosuch   # a comment --not-an-option",
            "planner refresh -v | head -1",
            "0 2 * * *  cd /srv/planner && .venv/bin/planner schedule --once",
            "planner nosuchcommand --x",
            "```",
            "```ini",
            "WorkingDirectory=/srv/planner",
            "ExecStart=/srv/planner/.venv/bin/planner schedule --every",
            "```",
            "planner quote --bad outside a block is prose",
        ]
    )
    found = invocations(text)
    assert [words for _, words in found] == [
        ["quote", "--gpu", "A100", "--hours=500", "--no-such-flag"],
        ["alerts", "nosuch"],
        ["refresh", "-v"],
        ["schedule", "--once"],
        ["nosuchcommand", "--x"],
        ["schedule", "--every"],
    ]
    assert [check_invocation(words) for _, words in found] == [
        ["planner quote has no option --no-such-flag"],
        ["planner alerts has no subcommand 'nosuch'"],
        [],
        [],
        ["no command 'nosuchcommand'"],
        ["planner schedule has no option --every"],
    ]
    assert check_invocation(["--db", "sqlite:///x.db", "alerts", "check", "--dry-run"]) == []
    assert check_invocation(["alerts"]) == ["planner alerts needs a subcommand"]


def architecture_sections() -> dict[str, str]:
    """docs/architecture.md's sections by the folder their heading names (``planner/commands/``), each
    with its text up to the next heading."""
    text = read(ROOT / "docs" / "architecture.md")
    sections: dict[str, str] = {}
    parts = re.split(r"^#{2,3} `([\w/]+/)`.*$", text, flags=re.M)
    for folder, body in zip(parts[1::2], parts[2::2], strict=True):
        sections[folder] = body
    return sections


def test_every_module_is_on_the_architecture_page():
    """A module added, moved or renamed shows on the page that draws the layout: each module of planner,
    scrapers, db and reports is named (by its path from the section's folder, or its file name) in the
    section of the deepest folder heading above it."""
    sections = architecture_sections()
    assert {"planner/", "planner/pricing/", "scrapers/", "db/", "reports/"} <= set(sections)
    missing = []
    for package in ("planner", "scrapers", "db", "reports"):
        for path in sorted((ROOT / package).rglob("*.py")):
            relative = path.relative_to(ROOT).as_posix()
            if path.name == "__init__.py" and relative.count("/") < 3 or "migrations/" in relative:
                continue  # a package's face; the migrations are named as a folder
            folder = max((f for f in sections if relative.startswith(f)), key=len)
            named = set(re.findall(r"`([\w/.]+\.py)`", sections[folder]))
            if relative.removeprefix(folder) not in named and path.name not in named:
                missing.append(relative)
    assert missing == [], "name each module in docs/architecture.md"
