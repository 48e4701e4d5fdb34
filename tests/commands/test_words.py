"""The words the library and the command line use, read from the source.

- No library string names a CLI flag: the library says ``lora rank``, the command line ``--lora-rank``
  (``planner.wording.Phrase``); a whole ``planner ...`` command in backticks, an example for a person,
  is allowed.
- Commands and reports compare statuses and billing modes with the ``vocab`` enums, never bare strings.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from planner.pricing.offer import Availability
from tests.helpers.source import nodes
from vocab import BillingMode, CheckStatus, RunStatus, StockStatus

ROOT = Path(__file__).resolve().parents[2]
FLAG = re.compile(r"(?<![\w-])--[a-z]")
EXAMPLE_COMMAND = re.compile(r"`planner [^`]*`")  # a command for a person to type, not a flag given
# Modules of the library that are command lines of their own; each with the reason.
FLAG_ALLOWED = {
    "planner/cli.py": "the root of the command line: its own options (--db, --config, --help)",
    "planner/__main__.py": "python -m planner runs the command line",
    "planner/workload/calibration.py": "python -m planner.workload.calibration --write: the script's own option",
}


def _library_modules() -> list[Path]:
    found = [p for p in (ROOT / "planner").glob("*.py")] + list((ROOT / "planner" / "alerts").rglob("*.py"))
    for package in ("db", "scrapers", "reports", "vocab"):
        found += (ROOT / package).rglob("*.py")
    return sorted(p for p in found if "migrations" not in p.parts)


def _docstrings(walked: tuple[ast.AST, ...]) -> set[int]:
    kinds = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
    return {
        id(node.body[0].value)
        for node in walked
        if isinstance(node, kinds)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }


def _strings(walked: tuple[ast.AST, ...]) -> list[tuple[int, str]]:
    """Every string literal but docstrings, an f-string whole (its fields as ``{}``)."""
    skip = _docstrings(walked)
    out = []
    for node in walked:
        if isinstance(node, ast.JoinedStr):
            parts = [v.value if isinstance(v, ast.Constant) else "{}" for v in node.values]
            skip.update(id(v) for v in node.values)
            out.append((node.lineno, "".join(str(p) for p in parts)))
    for node in walked:
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip:
            out.append((node.lineno, node.value))
    return out


def flags_named(path: Path, root: Path = ROOT) -> list[str]:
    """The library strings of ``path`` that name a flag outside an example command."""
    return [
        f"{path.relative_to(root)}:{line}: {text!r}"
        for line, text in _strings(nodes(path))
        if FLAG.search(EXAMPLE_COMMAND.sub("", text))
    ]


def test_no_library_string_names_a_flag():
    found = [
        hit
        for path in _library_modules()
        if str(path.relative_to(ROOT)) not in FLAG_ALLOWED
        for hit in flags_named(path)
    ]
    assert found == [], "word these with planner.wording.Phrase ({quantity}):\n" + "\n".join(found)


def test_the_flag_scan_sees_flags_and_passes_example_commands(tmp_path):
    source = tmp_path / "m.py"
    source.write_text(
        '"""Docstrings may say --anything."""\n'
        'A = "give --model"\n'
        'B = f"use --seq-len {n}"\n'
        'C = "run `planner refresh --provider x` to try it"\n'
        'D = f"run `planner refresh -v --provider {name}` and report"\n'
        'E = "give {model} or {params}"\n'
    )
    hits = sorted(hit.split(": ", 1)[1] for hit in flags_named(source, tmp_path))
    assert hits == ["'give --model'", "'use --seq-len {}'"]


# --- statuses --------------------------------------------------------------------------------------

ENUMS = (RunStatus, StockStatus, BillingMode, CheckStatus, Availability)
STATUS_WORDS = {member.value for enum in ENUMS for member in enum}


def _constants(node: ast.AST) -> list[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return [c for element in node.elts for c in _constants(element)]
    return []


def bare_statuses(path: Path, root: Path = ROOT) -> list[str]:
    """Comparisons (``==``, ``in``, ``.isin(...)``) of ``path`` against a bare status or billing word."""
    hits = []
    for node in nodes(path):
        operands: list[ast.AST] = []
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "isin":
            operands = list(node.args)
        words = [w for operand in operands for w in _constants(operand) if w in STATUS_WORDS]
        if words:
            hits.append(f"{path.relative_to(root)}:{node.lineno}: {', '.join(words)}")
    return sorted(hits, key=lambda hit: int(hit.split(":")[1]))


def test_commands_and_reports_compare_statuses_with_the_vocabulary():
    paths = sorted([*(ROOT / "planner" / "commands").glob("*.py"), *(ROOT / "reports").glob("*.py")])
    found = [hit for path in paths for hit in bare_statuses(path)]
    assert found == [], "use the vocab enums (RunStatus, BillingMode, ...):\n" + "\n".join(found)


def test_the_status_scan_sees_bare_words(tmp_path):
    source = tmp_path / "m.py"
    source.write_text(
        'a = s == "failed"\nb = s in ("ok", "partial")\nc = f.isin(("spot",))\nd = fmt == "csv"\n'
        "e = s == RunStatus.FAILED\n"
    )
    assert [h.split(": ")[1] for h in bare_statuses(source, tmp_path)] == ["failed", "ok, partial", "spot"]


@pytest.mark.parametrize("enum", ENUMS)
def test_a_status_is_its_string_so_output_is_unchanged(enum):
    for member in enum:
        assert member == member.value and f"{member}" == member.value and str(member) == member.value


def test_a_phrase_is_its_plain_wording_and_rewords_with_flags():
    import copy

    from planner.wording import Phrase

    note = Phrase("{seq_len} {n} is longer than {name}'s context", n=9000, name="odd{model}")
    assert note == "seq len 9000 is longer than odd{model}'s context"  # a value is never a template
    assert note.quantities == ("seq_len",)
    flag = note.worded(lambda q: "--" + q.replace("_", "-"))
    assert flag == "--seq-len 9000 is longer than odd{model}'s context"
    assert copy.deepcopy(note).worded(lambda q: "--x") == "--x 9000 is longer than odd{model}'s context"
