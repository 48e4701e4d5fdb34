"""Checks on how the planner command ends, and a run of it in a fresh interpreter."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def assert_one_line_error(result, code: int, fragment: str) -> None:
    """Exit ``code``, exactly one ``Error:`` line containing ``fragment``, a hint, no traceback."""
    output = result.stdout + result.stderr
    assert result.exit_code == code, output
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert "Traceback" not in output
    errors = [line for line in result.stderr.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1 and fragment in errors[0], result.stderr
    assert len(result.stderr.strip().splitlines()) <= 5, result.stderr
    assert "Decimal(" not in errors[0] and "<" not in errors[0].split(":", 1)[0], errors[0]  # no Python reprs
    hints = [line for line in result.stderr.splitlines() if line.startswith(("Hint:", "Try '"))]
    assert hints, f"no hint after {errors[0]!r}"


def line_of(text: str, start: str) -> str:
    """The one line of ``text`` that begins (after indentation) with ``start``: a note's label, so a test
    can check the values on that line without pinning the sentence around them."""
    lines = [line.strip() for line in text.splitlines() if line.lstrip().startswith(start)]
    assert len(lines) == 1, f"{len(lines)} line(s) starting {start!r} in:\n{text}"
    return lines[0]


ROOT = Path(__file__).resolve().parents[2]
HEAVY = (
    "sqlalchemy",
    "pandas",
    "requests",
    "alembic",
    "apscheduler",
    "planner.ingest.importer",
    "matplotlib",
)


def loaded(tmp_path: Path, *args: str) -> tuple[int, list[str], str]:
    """Run ``planner ARGS`` in a fresh interpreter; its exit code, the heavy modules it loaded, output."""
    argv = ["--db", f"sqlite:///{tmp_path / 'p.db'}", *args]
    code = (
        "import sys\n"
        "from planner.cli import cli\n"
        "try:\n"
        f"    cli.main({argv!r}, prog_name='planner')\n"
        "except SystemExit as exit:\n"
        "    code = exit.code\n"
        f"heavy = sorted(m for m in {HEAVY!r} if m in sys.modules)\n"
        "print('EXIT', code, 'HEAVY', ','.join(heavy), file=sys.stderr)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path,
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "PLANNER_DATA_DIR": str(tmp_path),
             "PYTHONPATH": str(ROOT)},
    )  # fmt: skip
    last = done.stderr.strip().splitlines()[-1].split()
    return int(last[1]), (last[3].split(",") if len(last) > 3 else []), done.stdout + done.stderr
