"""Views turn an answer's records into text for people: they read records, never the database, and
never a command (the commands call them). Every import counts, function-level and TYPE_CHECKING ones
too: a view names a database record by the answer's protocol for it (``answers.history.HistoryDay``).
"""

from __future__ import annotations

import ast
from pathlib import Path

from tests.helpers.source import nodes

VIEWS = Path(__file__).resolve().parents[2] / "planner" / "views"


def _imported(path: Path) -> set[str]:
    found = set()
    for node in nodes(path):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(node.module)
    return found


def test_views_import_no_database_and_no_command():
    for path in sorted(VIEWS.glob("*.py")):
        forbidden = {
            name
            for name in _imported(path)
            if name.split(".")[0] == "db" or name.startswith(("planner.commands", "planner.cli"))
        }
        assert forbidden == set(), path.name
