"""The import graph, read from the source (every ``import``, function-level and TYPE_CHECKING ones too).

- No library module imports a command (``planner.commands``, ``planner.cli``): arrows point down.
- ``vocab`` imports nothing of ours; ``scrapers``, ``db`` and ``reports`` never import ``planner``;
  ``scrapers`` and ``db`` import only themselves and ``vocab``; ``reports`` only ``db`` and ``vocab``.
- No two modules import each other, directly or round a longer loop.
- The decision core (``planner.pricing``) leans on nothing outward: nothing it imports, directly or
  through another module, is an answer, the ingest code, a view, a command, ``ops``, ``alerts`` or
  ``reports``. What it shares with them (money arithmetic, how a time is written) lives in leaves
  (``planner.money``, ``vocab``).
- The floors of ``planner`` point down (``FLOORS``); views and commands import no ``db``, commands
  no ``reports``.
- An import inside a function is a door to something heavy (``HEAVY``) or has a named reason.
- No module under ``tests/`` imports a test module (``tests.test_*``): shared helpers live in
  ``tests/helpers/`` and shared fixtures in ``tests/conftest.py``.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.helpers.source import nodes

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("planner", "scrapers", "db", "reports", "vocab")
COMMANDS = ("planner.commands", "planner.cli", "planner.__main__")
# Which of our packages each package may import (itself always).
ALLOWED = {
    "vocab": set(),
    "scrapers": {"vocab"},
    "db": {"vocab"},
    "reports": {"db", "vocab"},
    "planner": {"scrapers", "db", "reports", "vocab"},
}
PRICING = "planner.pricing"
# What the decision core may not lean on (it decides; these ask, store, show or send).
OUTWARD = (
    "planner.answers",
    "planner.ingest",
    "planner.views",
    "planner.commands",
    "planner.cli",
    "planner.ops",
    "planner.alerts",
    "reports",
)
# Loops still to be cut, each named: the test fails when one closes (remove it here) or a new one opens.
# Empty: there are none.
KNOWN_LOOPS: set[frozenset[str]] = set()


def _modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            if "migrations" in path.parts:
                continue
            parts = path.relative_to(ROOT).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            found[name] = path
    return found


def _imports(name: str, path: Path, known: set[str]) -> set[str]:
    """Our modules that ``name`` imports anywhere in its file."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out: set[str] = set()
    for node in nodes(path):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            targets = [f"{base}.{a.name}" for a in node.names] + [base]
        for target in targets:
            # the longest of our modules the target names (``from planner import catalog`` -> planner.catalog)
            while target and target not in known:
                target = target.rpartition(".")[0]
            if target and target != name:
                out.add(target)
    return out


@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    """The import graph of our packages, parsed once for the tests that read it (none changes it)."""
    modules = _modules()
    known = set(modules)
    return {name: _imports(name, path, known) for name, path in modules.items()}


def _loops(graph: dict[str, set[str]]) -> list[frozenset[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    loops: list[frozenset[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.add(w)
                if w == v:
                    break
            if len(component) > 1:
                loops.append(frozenset(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return loops


def _is_package_face(name: str) -> bool:
    # ``planner/__init__.py`` and the like: importing a submodule runs them, but they import nothing back.
    return name in PACKAGES


def test_the_graph_sees_lazy_imports(graph):
    assert "planner.ingest.importer" in graph["planner.ingest.snapshot"]  # imported inside a function only
    assert "scrapers.registry" in graph["planner.ingest.manifest"]


def test_no_library_module_imports_a_command(graph):
    upward = [
        (name, target)
        for name, targets in graph.items()
        if not name.startswith(COMMANDS)
        for target in targets
        if target.startswith(COMMANDS)
    ]
    assert upward == []


def test_packages_import_only_what_the_architecture_allows(graph):
    wrong = []
    for name, targets in graph.items():
        package = name.split(".")[0]
        for target in targets:
            other = target.split(".")[0]
            if other != package and other not in ALLOWED[package]:
                wrong.append((name, target))
    assert wrong == []


def _reached(graph: dict[str, set[str]], start: str) -> set[str]:
    """Every module ``start`` imports, directly or through others."""
    seen: set[str] = set()
    todo = [start]
    while todo:
        for target in graph.get(todo.pop(), ()):
            if target not in seen:
                seen.add(target)
                todo.append(target)
    return seen


def _is_in(name: str, packages: tuple[str, ...]) -> bool:
    return any(name == p or name.startswith(p + ".") for p in packages)


def test_pricing_leans_on_nothing_outward(graph):
    core = [name for name in graph if _is_in(name, (PRICING,))]
    assert "planner.pricing.cost" in core
    outward = {
        name: sorted(target for target in _reached(graph, name) if _is_in(target, OUTWARD)) for name in core
    }
    assert {name: found for name, found in outward.items() if found} == {}


def test_the_money_leaf_stays_a_leaf(graph):
    leaves = {"planner.billing", "planner.errors", "planner.wording", "vocab", "vocab.words"}
    assert _reached(graph, "planner.money") <= leaves


# The floors of ``planner``, top first: a module imports only from its own floor or a floor below (docs/architecture.md draws them). Every other module of ``planner`` is a vocabulary leaf, the
# ground floor.
FLOORS = (
    ("planner.__main__", "planner.cli", "planner.commands"),
    ("planner.ops",),
    ("planner.views",),
    ("planner.answers", "planner.app"),
    ("planner.ingest",),
    ("planner.alerts",),
    ("planner.pricing", "planner.workload"),
)


def _floor(name: str) -> int:
    for level, packages in enumerate(FLOORS):
        if _is_in(name, packages):
            return level
    return len(FLOORS)  # a vocabulary leaf


def test_planner_floors_point_down(graph):
    assert _floor("planner.commands.quote") < _floor("planner.views.quote") < _floor("planner.answers.quote")
    assert _floor("planner.pricing.cost") < _floor("planner.catalog")
    upward = sorted(
        (name, target)
        for name, targets in graph.items()
        if name.startswith("planner.")
        for target in targets
        if target.startswith("planner.") and _floor(target) < _floor(name)
    )
    assert upward == []


def test_views_and_commands_leave_sql_to_the_library(graph):
    """Views are text: they read records, never the database. Commands reach db and reports only through
    the library (a view or an answer)."""
    found = sorted(
        (name, target)
        for name, targets in graph.items()
        if _is_in(name, ("planner.views", "planner.commands"))
        for target in targets
        if _is_in(target, ("db",)) or (_is_in(name, ("planner.commands",)) and _is_in(target, ("reports",)))
    )
    assert found == []


def test_no_import_loops_but_the_known_ones(graph):
    loops = {loop for loop in _loops(graph) if not any(_is_package_face(m) for m in loop)}
    assert loops - KNOWN_LOOPS == set(), "a new import loop"
    assert KNOWN_LOOPS - loops == set(), "a known loop is gone: remove it from KNOWN_LOOPS"


def _test_modules_imported(source: str | Path) -> set[str]:
    """The test modules (``tests.test_*``) that ``source`` imports anywhere, lazily inside a function too."""
    out: set[str] = set()
    for node in nodes(source):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = "tests." * bool(node.level) + (node.module or "")  # relative imports sit in tests/
            targets = [base.rstrip("."), *(f"{base.rstrip('.')}.{a.name}" for a in node.names)]
        out.update(
            t for t in targets if t.removeprefix("tests.").startswith("test_") and t.startswith("tests.")
        )
    return {t.split(".")[1] for t in out}


def test_the_test_check_sees_lazy_and_relative_imports():
    source = "def f():\n    from tests.test_refresh import RAW\nfrom . import test_email\nimport tests.test_x as x\n"
    assert _test_modules_imported(source) == {"test_refresh", "test_email", "test_x"}
    assert (
        _test_modules_imported("from tests.helpers.replay import RAW\nfrom tests.conftest import x\n")
        == set()
    )


def test_no_test_module_imports_another_test_module():
    wrong = {
        str(path.relative_to(ROOT)): sorted(found)
        for path in sorted((ROOT / "tests").rglob("*.py"))
        if (found := _test_modules_imported(path))
    }
    assert wrong == {}, "move the shared helper to tests/helpers/ (a fixture: tests/conftest.py)"


# Libraries a command should load only when it uses them: each costs a noticeable part of a start
# (sqlalchemy about 0.1 s, pandas 0.3 s, matplotlib 0.5 s on this kind of machine; smtplib brings ssl
# and the email package, about 20 ms, which `refresh --help` and `report --help` need not pay).
HEAVY = (
    "sqlalchemy",
    "pandas",
    "matplotlib",
    "apscheduler",
    "alembic",
    "requests",
    "urllib3",
    "bs4",
    "psycopg",
    "smtplib",
)
# Function-level imports with another reason than weight: by the module imported, or by the importer.
LAZY_FOR_ANOTHER_REASON = {
    "fcntl": "POSIX only: imported where a lock is taken",
}
LAZY_IN = {
    "planner.cli": "the root of every run: `planner --help` loads click and little of ours (bench: <= 0.25 s)",
}


def _import_nodes(path: Path) -> tuple[list[ast.stmt], list[ast.stmt]]:
    """(the imports run when the module loads, those inside a function); TYPE_CHECKING blocks are neither."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    top: list[ast.stmt] = []
    inner: list[ast.stmt] = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and ast.unparse(child.test) in (
                "TYPE_CHECKING",
                "typing.TYPE_CHECKING",
            ):
                for other in child.orelse:  # an else branch runs
                    visit(ast.Module(body=[other], type_ignores=[]), in_function)
                continue
            if isinstance(child, (ast.Import, ast.ImportFrom)):
                (inner if in_function else top).append(child)
            visit(
                child, in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            )

    visit(tree, False)
    return top, inner


def _names(node: ast.stmt, package: str) -> list[str]:
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    assert isinstance(node, ast.ImportFrom)
    base = node.module or ""
    if node.level:
        anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
        base = ".".join([*anchor, base] if base else anchor)
    return [base, *(f"{base}.{a.name}" for a in node.names)]


def test_a_function_level_import_is_a_door_to_something_heavy():
    """An import inside a function defers a cost: it is there only where the module it loads pulls in
    a heavy library (directly or through our modules' top-level imports), or for a reason named in
    LAZY_FOR_ANOTHER_REASON. Everything else is imported at the top, where a reader looks."""
    modules = _modules()
    known = set(modules)

    def ours(target: str) -> str | None:
        while target and target not in known:
            target = target.rpartition(".")[0]
        return target or None

    top_level: dict[str, set[str]] = {}
    inner: dict[str, list[tuple[int, list[str]]]] = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        top, lazy = _import_nodes(path)
        top_level[name] = {t for node in top for t in _names(node, package)}
        inner[name] = [(node.lineno, _names(node, package)) for node in lazy]

    heavy_memo: dict[str, bool] = {}

    def heavy(module: str, seen: frozenset[str] = frozenset()) -> bool:
        if module.split(".")[0] in HEAVY:
            return True
        mine = ours(module)
        if mine is None or mine in seen:
            return False
        if mine not in heavy_memo:
            heavy_memo[mine] = any(heavy(t, seen | {mine}) for t in top_level[mine])
        return heavy_memo[mine]

    # The rule can fail: it sees function-level imports, and tells light modules from heavy ones.
    assert sum(len(found) for found in inner.values()) > 50
    assert heavy("db.queries") and heavy("planner.ingest.refresh") and heavy("reports.mail")
    assert (
        not heavy("planner.pricing.query")
        and not heavy("planner.answers.quote")
        and not heavy("planner.catalog")
    )
    needless = sorted(
        f"{modules[name].relative_to(ROOT)}:{line} {targets[0]}"
        for name, found in inner.items()
        for line, targets in found
        if not any(heavy(t) for t in targets)
        and targets[0].split(".")[0] not in LAZY_FOR_ANOTHER_REASON
        and name not in LAZY_IN
    )
    assert needless == []
