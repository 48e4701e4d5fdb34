"""Names that come from providers or CSV files never become code: SQL text is never built from strings
(every value is a bound parameter), nothing runs a shell, and no name chooses a file path.

The SQL and shell checks read the source (``ast``) of every module of the four packages, so a new
``f"SELECT ... {name}"`` anywhere fails here; each check is shown to catch what it looks for. The path
check runs a refresh and a report on provider answers carrying ``../../`` and formula names and looks at
every file that appeared.
"""

from __future__ import annotations

import ast
import csv
import io
import json
import re
from pathlib import Path

import pytest

from tests.helpers.replay import make_config, outcome, recordings, refresh, replay_copy
from tests.helpers.source import nodes

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("planner", "db", "reports", "scrapers")
SQL_WORDS = re.compile(r"\b(SELECT|INSERT\s+INTO|UPDATE|DELETE\s+FROM|PRAGMA|CREATE|DROP|ALTER|WHERE|COPY)\b")
EXECUTORS = {"execute", "executemany", "exec_driver_sql", "text", "execution_options"}


def sources() -> list[Path]:
    return sorted(p for package in PACKAGES for p in (ROOT / package).rglob("*.py"))


def _safe_value(node: ast.expr) -> bool:
    """A formatted value that cannot carry text into SQL: an int(...)/float(...) call or a number."""
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
        return True
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("int", "float")


# Reviewed: the only values these files format into SQL text are identifiers from db/schema.py quoted by
# the dialect's identifier preparer, and the driver's placeholder marks; every value is a bound parameter.
# (file -> the source of each formatted value allowed there)
IDENTIFIERS_ONLY = {
    "db/bulk.py": {
        "table",
        "columns",
        "prep.format_table(prices)",
        "', '.join((prep.quote(c) for c in _INSERTED))",
        "', '.join([self.mark] * len(_INSERTED))",
    },
}
_allowed: set[str] = set()  # the entry for the file being read


def _built_string(node: ast.expr) -> bool:
    """True for a string assembled at run time from non-numeric values (f-string, %, +, .format)."""
    if isinstance(node, ast.JoinedStr):
        return any(
            isinstance(v, ast.FormattedValue)
            and not _safe_value(v.value)
            and ast.unparse(v.value) not in _allowed
            for v in node.values
        )
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod | ast.Add):
        return any(
            isinstance(side, ast.Constant) and isinstance(side.value, str) for side in (node.left, node.right)
        ) or (_built_string(node.left) or _built_string(node.right))
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "format":
        return True
    return False


def _literal_text(node: ast.expr) -> str:
    if isinstance(node, ast.JoinedStr):
        return "".join(
            v.value for v in node.values if isinstance(v, ast.Constant) and isinstance(v.value, str)
        )
    if isinstance(node, ast.BinOp):
        return _literal_text(node.left) + _literal_text(node.right)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        return _literal_text(node.func.value)
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else ""


def sql_built_from_strings(
    source: str | Path, allowed: set[str] | frozenset[str] = frozenset()
) -> list[tuple[int, str]]:
    """(line, code) of every SQL statement built from run-time strings in ``source`` (formatted values
    whose source is in ``allowed`` are reviewed identifiers)."""
    _allowed.clear()
    _allowed.update(allowed)
    found = []
    for node in nodes(source):
        # 1. anything handed to execute()/text() that is assembled from strings
        if isinstance(node, ast.Call):
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            if name in EXECUTORS and node.args and _built_string(node.args[0]):
                found.append((node.lineno, ast.unparse(node)[:100]))
        # 2. any assembled string that reads like SQL, wherever it goes
        if _built_string(node) if isinstance(node, ast.expr) else False:
            if SQL_WORDS.search(_literal_text(node)):  # type: ignore[arg-type]
                found.append((node.lineno, ast.unparse(node)[:100]))
    return sorted(set(found))


def test_the_sql_check_catches_what_it_looks_for():
    bad = {
        "conn.execute(text(f\"SELECT * FROM prices WHERE region = '{region}'\"))": True,
        'conn.execute("DELETE FROM runs WHERE id = %s" % run_id)': True,
        "q = 'SELECT * FROM x WHERE a = ' + name": True,
        "conn.exec_driver_sql('UPDATE t SET a = {}'.format(value))": True,
        "sql = f'DROP TABLE {table}'": True,
        "conn.execute(text('SELECT * FROM prices WHERE region = :r'), {'r': region})": False,
        "cur.execute(f'PRAGMA busy_timeout = {int(seconds * 1000)}')": False,
        "message = f'{name}: line {line}: expected {width} fields'": False,
    }
    for code, is_bad in bad.items():
        assert bool(sql_built_from_strings(code)) is is_bad, code


def test_no_sql_statement_is_built_from_strings():
    offenders = {}
    for path in sources():
        name = str(path.relative_to(ROOT))
        found = sql_built_from_strings(path, IDENTIFIERS_ONLY.get(name, set()))
        if found:
            offenders[name] = found
    assert not offenders, offenders


def test_a_reviewed_file_still_may_not_format_a_value():
    code = "conn.exec_driver_sql(f'INSERT INTO {table} ({columns}) VALUES ({region})')"
    assert sql_built_from_strings(code, IDENTIFIERS_ONLY["db/bulk.py"])
    assert not sql_built_from_strings(code.replace("{region}", "?"), IDENTIFIERS_ONLY["db/bulk.py"])


def shell_calls(source: str | Path) -> list[tuple[int, str]]:
    """(line, code) of every call that starts a process or a shell."""
    risky = {
        "system",
        "popen",
        "Popen",
        "run",
        "call",
        "check_call",
        "check_output",
        "spawnl",
        "execv",
        "execvp",
    }
    modules = {"os", "subprocess", "pty", "commands"}
    found = []
    imported = {
        alias.name
        for node in nodes(source)
        if isinstance(node, ast.ImportFrom) and node.module in modules
        for alias in node.names
    }
    for node in nodes(source):
        if isinstance(node, ast.Import) and any(a.name in ("subprocess", "pty") for a in node.names):
            found.append((node.lineno, ast.unparse(node)))
        if isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
                if func.value.id in modules and func.attr in risky:
                    found.append((node.lineno, ast.unparse(node)[:100]))
            elif isinstance(func, ast.Name) and func.id in imported & risky:
                found.append((node.lineno, ast.unparse(node)[:100]))
            if any(k.arg == "shell" for k in node.keywords):
                found.append((node.lineno, ast.unparse(node)[:100]))
    return found


def test_the_shell_check_catches_what_it_looks_for():
    assert shell_calls("import subprocess\nsubprocess.run(['ls', name])")
    assert shell_calls("import os\nos.system('rm ' + name)")
    assert shell_calls("from subprocess import Popen\nPopen(cmd, shell=True)")
    assert not shell_calls("import os\nos.replace(tmp, path)")


def test_nothing_runs_a_shell_or_a_process():
    offenders = {str(path.relative_to(ROOT)): found for path in sources() if (found := shell_calls(path))}
    assert not offenders, offenders


def test_eval_exec_and_pickle_are_not_used_on_data():
    for path in sources():
        for node in nodes(path):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                assert node.func.id not in ("eval", "exec", "__import__"), f"{path}:{node.lineno}"
            if isinstance(node, ast.Import | ast.ImportFrom):
                names = [a.name for a in node.names] + [getattr(node, "module", None) or ""]
                assert not {"pickle", "marshal", "shelve"} & set(names), f"{path}:{node.lineno}"


# --- names from providers reach no path, no formula ---------------------------------------------------

EVIL_TYPES = ["../../../../tmp/planner-evil", "..\\..\\evil", "/etc/planner-evil", "GN7.2XLARGE32/../../x"]
FORMULAS = ['=HYPERLINK("http://evil.example","x")', "@SUM(1+1)", "+cmd|' /C calc'!A0", "-2+3"]


def _poison(folder: Path) -> None:
    """Tencent's answers now name their instances with paths and formulas (the GPUs stay real)."""
    names = iter(EVIL_TYPES + FORMULAS)
    for body in recordings(folder, "tencent", "/cgi/api"):
        page = json.loads(body.read_bytes())
        for item in page["data"]["Response"]["InstanceTypeQuotaSet"]:
            item["InstanceType"] = next(names, item["InstanceType"])
            item["Zone"] = "../../zone"
        body.write_text(json.dumps(page), encoding="utf-8")


def test_provider_names_cannot_write_outside_the_folders_or_run_as_formulas(run_cli, tmp_path):
    folder = replay_copy(tmp_path)
    _poison(folder)
    before = {p for p in Path("/tmp").glob("planner-evil*")} | {p for p in tmp_path.parent.glob("*evil*")}
    saved, reports = tmp_path / "saved", tmp_path / "out"
    listing_before = {p for p in tmp_path.rglob("*")}
    result = run_cli("refresh", "--provider", "tencent", "--from-raw", str(folder), "--save-raw", str(saved))
    assert result.exit_code == 0, result.output
    assert run_cli("report", "--out", str(reports)).exit_code == 0
    new = {p for p in tmp_path.rglob("*") if p.is_file()} - listing_before
    outside = [
        p
        for p in new
        if not (p.is_relative_to(saved) or p.is_relative_to(reports) or p.name.startswith("planner.db"))
        and not p.is_relative_to(tmp_path / "home" / ".cache" / "matplotlib")  # its font list, for the chart
    ]
    assert not outside, outside
    assert {p for p in Path("/tmp").glob("planner-evil*")} | {
        p for p in tmp_path.parent.glob("*evil*")
    } == before
    # raw files are named by counter, method and hash; report files by date and table
    assert all(
        re.fullmatch(r"\d{4}-(GET|POST)-[0-9a-f]{12}\.(body|json)", p.name)
        for p in (saved / "tencent").iterdir()
    )
    assert all(re.fullmatch(r"\d{4}-\d\d-\d\d_[a-z_]+\.(csv|png|html)", p.name) for p in reports.iterdir())
    # the path-like names were stored as text; the formula-like ones refused, and said so
    cells = [
        c
        for f in reports.glob("*.csv")
        for row in csv.reader(io.StringIO(f.read_text("utf-8-sig")))
        for c in row
    ]
    assert any(c in EVIL_TYPES for c in cells)
    assert not any(c.startswith(("=", "+", "-", "@")) for c in cells if not re.fullmatch(r"-?[\d.]+", c))
    assert "begins like a formula" in result.stdout
    with_formulas = refresh_outcome(run_cli, folder)
    assert with_formulas.status == "ok" and with_formulas.skipped >= len(FORMULAS)


def refresh_outcome(run_cli, folder: Path):
    doc = json.loads(
        run_cli("refresh", "--provider", "tencent", "--from-raw", str(folder), "--format", "json").stdout
    )
    return type("Outcome", (), next(o for o in doc["outcomes"] if o["provider"] == "tencent"))


@pytest.mark.parametrize("name", EVIL_TYPES + FORMULAS + ["a\x00b", "x" * 200])
def test_an_instance_name_is_stored_only_if_it_is_plain_text(engine, tmp_path, name):
    folder = replay_copy(tmp_path)
    for body in recordings(folder, "tencent", "/cgi/api"):
        page = json.loads(body.read_bytes())
        page["data"]["Response"]["InstanceTypeQuotaSet"][0]["InstanceType"] = name
        body.write_text(json.dumps(page), encoding="utf-8")
    summary = refresh(engine, tmp_path, make_config(tmp_path), from_raw=folder, providers=["tencent"])
    tencent = outcome(summary, "tencent")
    assert tencent.status == "ok", tencent.error  # one odd name never costs the provider its run
    from db.queries import latest_prices

    with engine.connect() as conn:
        stored = {p.instance_type for p in latest_prices(conn, providers=["tencent"])}
    plain = name in EVIL_TYPES
    assert (name in stored) is plain
    if not plain:
        assert any(
            name[:20] in n or "formula" in n or "control character" in n or "longer than" in n
            for n in tencent.notes
        ), tencent.notes


POISON = ["x'); DROP TABLE prices;--", "ap-beijing' OR '1'='1", 'GT4" ; DELETE FROM instances; --']


def test_names_from_providers_and_files_reach_the_database_only_as_parameters(run_cli, engine, tmp_path):
    """Every statement sent while poisoned names flow in (a provider's answers, an imported file, the
    filters of reading commands) is captured: the names are never part of any SQL text."""
    from sqlalchemy import event, inspect
    from sqlalchemy.engine import Engine

    from db.queries import latest_prices

    folder = replay_copy(tmp_path)
    for body in recordings(folder, "tencent", "/cgi/api"):
        page = json.loads(body.read_bytes())
        for item, name in zip(page["data"]["Response"]["InstanceTypeQuotaSet"], POISON, strict=False):
            item["InstanceType"] = name
        body.write_text(json.dumps(page), encoding="utf-8")
    rows = [{"provider": "tencent", "region": POISON[1], "instance_type": POISON[0], "gpu_model": "A100-40GB",
             "gpu_count": 1, "billing": "on_demand", "price": "9.5", "currency": "CNY", "observed_at": "2026-11-01",
             "source": POISON[2]}]  # fmt: skip
    path = tmp_path / "poison.csv"
    with path.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    statements: list[str] = []

    def capture(conn, cursor, statement, *args) -> None:  # noqa: ANN001 - SQLAlchemy's hook
        statements.append(statement)

    event.listen(Engine, "before_cursor_execute", capture)
    try:
        assert run_cli("refresh", "--provider", "tencent", "--from-raw", str(folder)).exit_code == 0
        assert run_cli("import", str(path)).exit_code == 0
        for args in (
            ["prices", "--region", POISON[1], "--format", "json"],
            ["quote", "--gpu", "T4", "--hours", "10", "--region", POISON[1]],
            ["history", "--gpu", "A100"],
            ["runs", "--format", "json"],
            ["export"],
            ["report", "--out", str(tmp_path / "reports")],
        ):
            # The poisoned region matches nothing: quote has no option to recommend (exit 1), no error.
            assert run_cli(*args).exit_code == (1 if args[0] == "quote" else 0), args
    finally:
        event.remove(Engine, "before_cursor_execute", capture)
    assert len(statements) > 20
    pieces = ["DROP TABLE prices", "OR '1'='1", "DELETE FROM instances", *POISON]
    leaked = [s for s in statements if any(p in s for p in pieces)]
    assert not leaked, leaked[:3]
    assert {"prices", "instances", "scrape_runs"} <= set(inspect(engine).get_table_names())
    with engine.connect() as conn:
        names = {(p.region, p.instance_type) for p in latest_prices(conn, providers=["tencent"])}
    assert (POISON[1], POISON[0]) in names and any(t == POISON[0] for _, t in names)
