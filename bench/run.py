"""The benchmark: whole-process wall time and peak memory of the commands people run, over a synthetic
history of about a million prices, against the floor (a Python process that imports SQLAlchemy and runs
the one indexed query a quote needs).

    python bench/run.py                      # 100k and 1M rows on SQLite, 5 runs each, writes docs/benchmarks.md
    python bench/run.py --rows 200000 --small-rows 0 --runs 3 --no-write
    python bench/run.py --pg postgresql+psycopg://root@127.0.0.1:5432/test   # and 1M rows on PostgreSQL

Every database is filled first: the CSV history goes in through ``planner import`` (timed: the median of
``--import-runs`` imports into an empty, migrated database, then a re-import of the same file, which
must add nothing), and the stock the nightly refreshes would have recorded is added beside it
(``bench/generate.py``). Then the commands run in rounds: one warm-up round, then ``--runs`` rounds,
each running the floor and every command once on every database, so that a slow minute of a shared
machine slows them all alike. A command's ratio to the floor is the median of its per-round ratios.

Not a test: it prints figures. The targets it checks are those of issue 8 (see docs/benchmarks.md).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import uuid
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench import generate  # noqa: E402

PLANNER = [str(Path(sys.executable).with_name("planner"))]
FLOOR = "floor"
QUOTE = "quote --gpu A100 --hours 500"
COMMANDS: dict[str, list[str]] = {
    "planner --help": ["--help"],
    "argument error (--hours -1)": ["quote", "--gpu", "A100", "--hours", "-1"],
    QUOTE: ["quote", "--gpu", "A100", "--hours", "500"],
    "quote --gpu H800 --gpus 8 --hours 300 --days 30": [
        *("quote", "--gpu", "H800", "--gpus", "8", "--hours", "300", "--days", "30"),
    ],
    "quote --gpu A100 --hours 500 --price-basis median": [
        *("quote", "--gpu", "A100", "--hours", "500", "--price-basis", "median"),
    ],
    "plan --params 7B --tokens 1B --task lora": [
        "plan",
        "--params",
        "7B",
        "--tokens",
        "1B",
        "--task",
        "lora",
    ],
    "gpus --value": ["gpus", "--value"],
    "history --gpu A100 --days 90 --plot FILE": [
        *("history", "--gpu", "A100", "--days", "90", "--plot", "{home}/a100.png"),
    ],
    "report --out DIR": ["report", "--out", "{home}/report"],
}
EXPECTED_EXIT = {"argument error (--hours -1)": 2}
TARGETS_S = {
    "planner --help": 0.25,
    "argument error (--hours -1)": 0.25,
    "plan --params 7B --tokens 1B --task lora": 2.0,
    "report --out DIR": 5.0,
    # Not issue 8's: every model's latest prices, and a chart (matplotlib alone takes ~0.5 s to load).
    "gpus --value": 1.0,
    "history --gpu A100 --days 90 --plot FILE": 3.0,
}
QUOTE_MAX_RATIO, QUOTE_MAX_MB, MAX_GROWTH, IMPORT_MIN_ROWS_PER_S = 1.5, 150, 0.20, 50_000


@dataclass(frozen=True)
class Measure:
    wall_s: float
    peak_mb: float
    exit_code: int


@dataclass
class Target:
    """One database under test: its URL, its environment and every measure taken on it."""

    label: str
    rows: int
    url: str
    home: Path
    imports: list[Measure] = field(default_factory=list)
    reimport: Measure | None = None
    stock_rows: int = 0
    runs: dict[str, list[Measure]] = field(default_factory=dict)

    @property
    def env(self) -> dict[str, str]:
        env = {**os.environ, "HOME": str(self.home), "PLANNER_DATA_DIR": str(self.home)}
        env["PLANNER_DATABASE_URL"] = self.url
        env.pop("PLANNER_CONFIG", None)
        return env

    def median(self, name: str) -> Measure:
        runs = self.runs[name]
        return Measure(
            statistics.median(r.wall_s for r in runs),
            statistics.median(r.peak_mb for r in runs),
            max(r.exit_code for r in runs),
        )

    def ratio(self, name: str) -> float:
        """The median of the per-round ratios to the floor measured in the same round."""
        return statistics.median(
            m.wall_s / f.wall_s for m, f in zip(self.runs[name], self.runs[FLOOR], strict=True)
        )

    @property
    def import_rows_per_s(self) -> float:
        return self.rows / statistics.median(m.wall_s for m in self.imports)


# Peak memory needs a small parent: Linux counts the parent's memory at fork (or vfork) and exec into
# the child's peak RSS, and this process holds SQLAlchemy. So a fresh interpreter (about 10 MB, less
# than any command's own peak) forks and execs each command, times it and reports its rusage on a pipe.
_LAUNCHER = """
import os, sys, time
report, cmd = int(sys.argv[1]), sys.argv[2:]
start = time.perf_counter()
pid = os.fork()
if pid == 0:
    os.close(report)
    try:
        os.execv(cmd[0], cmd)
    finally:
        os._exit(127)
_, status, usage = os.wait4(pid, 0)
wall = time.perf_counter() - start
os.write(report, f"{wall} {usage.ru_maxrss} {os.waitstatus_to_exitcode(status)}".encode())
"""


def run_once(cmd: list[str], env: dict[str, str], cwd: Path, stdout: int | None = None) -> Measure:
    """Wall time and peak RSS of one whole process, measured by a small launcher (see above)."""
    read, write = os.pipe()
    try:
        subprocess.run(
            [sys.executable, "-c", _LAUNCHER, str(write), *cmd],
            env=env,
            cwd=cwd,
            stdout=stdout or subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            pass_fds=(write,),
            check=True,
        )
        os.close(write)
        write = -1
        with os.fdopen(read, "rb") as fh:
            read = -1
            wall, rss_kb, code = fh.read().split()
    finally:
        for fd in (read, write):
            if fd >= 0:
                os.close(fd)
    return Measure(float(wall), int(rss_kb) / 1024, int(code))


def floor_command(url: str) -> list[str]:
    """A process that imports SQLAlchemy alone and runs, through it, the quote's latest-price query."""
    from sqlalchemy import create_engine

    from db.queries import _latest_statement
    from planner import catalog

    models = [s.model.name for s in catalog.resolve_query("A100")]
    dialect = create_engine(url).dialect
    statement = _latest_statement(models, None, None, None, lateral=dialect.name == "postgresql")
    sql = str(statement.compile(dialect=dialect, compile_kwargs={"literal_binds": True}))
    code = (
        "import sqlalchemy as sa\n"
        f"e = sa.create_engine({url!r})\n"
        "with e.connect() as c:\n"
        f"    rows = c.execute(sa.text({sql!r})).fetchall()\n"
        "assert rows\n"
    )
    return [sys.executable, "-c", code]


class Postgres:
    """Fresh schemas in a disposable PostgreSQL database, one per import, dropped at the end."""

    def __init__(self, base_url: str):
        from sqlalchemy import create_engine

        self.base = base_url
        self.admin = create_engine(base_url)
        self.schemas: list[str] = []

    def fresh_url(self) -> str:
        from sqlalchemy import text

        schema = f"bench_{uuid.uuid4().hex[:10]}"
        with self.admin.begin() as conn:
            conn.execute(text(f'CREATE SCHEMA "{schema}"'))
        self.schemas.append(schema)
        sep = "&" if "?" in self.base else "?"
        return f"{self.base}{sep}options=-csearch_path%3D{schema}"

    def version(self) -> str:
        from sqlalchemy import text

        with self.admin.connect() as conn:
            return str(conn.execute(text("SHOW server_version")).scalar()).split()[0]

    def drop_all(self) -> None:
        from sqlalchemy import text

        with self.admin.begin() as conn:
            for schema in self.schemas:
                conn.execute(text(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE'))
        self.admin.dispose()


def prepare(
    label: str, rows: int, workdir: Path, import_runs: int, pg: Postgres | None, stock: bool
) -> Target:
    """Generate the history, time its import (fresh database each time) and a re-import, add stock."""
    csv_path = workdir / f"history-{rows}.csv"
    if not csv_path.exists():
        print(f"[{label}] generating {csv_path.name} ...", file=sys.stderr, flush=True)
        generate.write(csv_path, rows)
    with csv_path.open(encoding="utf-8") as fh:
        row_count = sum(1 for _ in fh) - 1
    target = Target(label, row_count, "", workdir / f"home-{label.replace(' ', '-')}")
    for attempt in range(import_runs):
        shutil.rmtree(target.home, ignore_errors=True)
        target.home.mkdir(parents=True)
        target.url = pg.fresh_url() if pg else f"sqlite:///{target.home / 'planner.db'}"
        _migrate(target.url)  # the tables exist before the clock starts: the import is timed alone
        print(f"[{label}] import {attempt + 1}/{import_runs} ...", file=sys.stderr, flush=True)
        measure, result = _import(target, csv_path)
        # A row at its series' previous price confirms that level instead of adding a row.
        if result["stored"] + result["already_present"] != row_count or result["rows"] != row_count:
            raise SystemExit(f"import stored {result['stored']} of {row_count} rows: {result}")
        target.imports.append(measure)
    print(f"[{label}] re-import (must add nothing) ...", file=sys.stderr, flush=True)
    target.reimport, result = _import(target, csv_path)
    if result["stored"] != 0 or result["already_present"] != row_count:
        raise SystemExit(f"re-importing the same file stored {result['stored']} rows: {result}")
    if stock:
        print(f"[{label}] adding the nightly stock observations ...", file=sys.stderr, flush=True)
        target.stock_rows = generate.write_stock(target.url)
    return target


def _migrate(url: str) -> None:
    from db.engine import ensure_schema, make_engine

    engine = make_engine(url)
    ensure_schema(engine)
    engine.dispose()


def _import(target: Target, csv_path: Path) -> tuple[Measure, dict[str, int]]:
    out = target.home / "import.json"
    with out.open("w") as fh:
        measure = run_once(
            [*PLANNER, "import", str(csv_path), "--format", "json"], target.env, target.home, fh.fileno()
        )
    if measure.exit_code:
        raise SystemExit(f"import failed (exit {measure.exit_code}); run it by hand to see why")
    return measure, json.loads(out.read_text())


def measure_rounds(targets: list[Target], runs: int) -> None:
    """A warm-up round, then ``runs`` rounds of the floor and every command on every database."""
    floors = {t.label: floor_command(t.url) for t in targets}
    for t in targets:
        t.runs = {FLOOR: [], **{name: [] for name in COMMANDS}}
    for round_no in range(runs + 1):
        print(
            f"round {round_no}/{runs}{' (warm-up)' if not round_no else ''} ...", file=sys.stderr, flush=True
        )
        for t in targets:
            results = {FLOOR: run_once(floors[t.label], t.env, t.home)}
            for name, args in COMMANDS.items():
                args = [a.replace("{home}", str(t.home)) for a in args]
                results[name] = run_once([*PLANNER, *args], t.env, t.home)
            if round_no:
                for name, measure in results.items():
                    t.runs[name].append(measure)


def machine(pg_version: str | None) -> str:
    import sqlalchemy

    cpu = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem_gb = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    text = (
        f"{os.cpu_count()} cores ({cpu}), {mem_gb:.0f} GiB RAM, {platform.system()} {platform.release()}, "
        f"Python {platform.python_version()}, SQLAlchemy {sqlalchemy.__version__}, SQLite {sqlite3.sqlite_version}"
    )
    return text + (f", PostgreSQL {pg_version}" if pg_version else "")


def render(targets: list[Target]) -> str:
    lines = []
    for t in targets:
        floor = t.median(FLOOR)
        stock = f" and {t.stock_rows:,} stock observations" if t.stock_rows else ""
        lines.append(f"### {t.label}: {t.rows:,} price rows{stock}\n")
        lines.append("| command | median wall (s) | × floor | peak memory (MB) | exit | target |")
        lines.append("|---|---:|---:|---:|---:|---|")
        lines.append(
            f"| floor: import SQLAlchemy + the quote's query | {floor.wall_s:.3f} | 1.00 | {floor.peak_mb:.0f} "
            f"| {floor.exit_code} | |"
        )
        for name in COMMANDS:
            m = t.median(name)
            shown = name if name.startswith(("planner", "argument")) else f"planner {name}"
            lines.append(
                f"| `{shown}` | {m.wall_s:.3f} | {t.ratio(name):.2f} | {m.peak_mb:.0f} | {m.exit_code} "
                f"| {_verdict(t, name)} |"
            )
        imp = Measure(
            statistics.median(m.wall_s for m in t.imports),
            statistics.median(m.peak_mb for m in t.imports),
            max(m.exit_code for m in t.imports),
        )
        ok = t.import_rows_per_s >= IMPORT_MIN_ROWS_PER_S
        lines.append(
            f"| `planner import` ({t.rows:,} rows, median of {len(t.imports)}) | {imp.wall_s:.2f} | | "
            f"{imp.peak_mb:.0f} | {imp.exit_code} | {t.import_rows_per_s:,.0f} rows/s "
            f"{'met' if ok else 'MISSED'} (≥ {IMPORT_MIN_ROWS_PER_S:,}) |"
        )
        if t.reimport:
            lines.append(
                f"| `planner import` again (adds nothing) | {t.reimport.wall_s:.2f} | | "
                f"{t.reimport.peak_mb:.0f} | {t.reimport.exit_code} | {t.rows / t.reimport.wall_s:,.0f} rows/s |"
            )
        lines.append("")
    return "\n".join(lines)


def _verdict(t: Target, name: str) -> str:
    m = t.median(name)
    if m.exit_code != EXPECTED_EXIT.get(name, 0):
        return f"FAILED (exit {m.exit_code})"
    if name.startswith("quote"):
        ok = t.ratio(name) <= QUOTE_MAX_RATIO and m.peak_mb < QUOTE_MAX_MB
        return f"{'met' if ok else 'MISSED'} (≤ {QUOTE_MAX_RATIO}× floor, < {QUOTE_MAX_MB} MB)"
    if name in TARGETS_S:
        return f"{'met' if m.wall_s < TARGETS_S[name] else 'MISSED'} (< {TARGETS_S[name]} s)"
    return ""


def growth(small: Target, large: Target) -> str:
    """The quote's growth from the small to the large history, from rounds that ran both side by side."""
    times = [b.wall_s / a.wall_s for a, b in zip(small.runs[QUOTE], large.runs[QUOTE], strict=True)]
    dt = statistics.median(times) - 1
    dm = large.median(QUOTE).peak_mb / small.median(QUOTE).peak_mb - 1
    ok = dt <= MAX_GROWTH and dm <= MAX_GROWTH
    return (
        f"Growth of `planner {QUOTE}` from {small.rows:,} to {large.rows:,} rows (median of the per-round "
        f"ratios): time {dt:+.0%}, peak memory {dm:+.0%} ({'met' if ok else 'MISSED'}: at most "
        f"+{MAX_GROWTH:.0%} each)."
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0].replace("\n", " "))
    parser.add_argument("--rows", type=int, default=1_000_000, help="rows of history for the main run")
    parser.add_argument(
        "--small-rows", type=int, default=100_000, help="rows for the growth comparison (0: skip)"
    )
    parser.add_argument("--runs", type=int, default=5, help="rounds of every command (median)")
    parser.add_argument("--import-runs", type=int, default=5, help="imports into a fresh database (median)")
    parser.add_argument(
        "--pg",
        metavar="URL",
        help="also run the main size on this PostgreSQL database (schemas are made and dropped)",
    )
    parser.add_argument("--no-stock", action="store_true", help="prices only: no stock observations")
    parser.add_argument("--workdir", type=Path, help="where to keep generated files (default: a temp folder)")
    parser.add_argument(
        "--no-write", action="store_true", help="print only; do not rewrite docs/benchmarks.md"
    )
    args = parser.parse_args(argv)
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="planner-bench-"))
    workdir.mkdir(parents=True, exist_ok=True)
    pg = Postgres(args.pg) if args.pg else None
    try:
        targets = []
        if args.small_rows:
            targets.append(
                prepare("SQLite, small", args.small_rows, workdir, args.import_runs, None, not args.no_stock)
            )
        targets.append(prepare("SQLite", args.rows, workdir, args.import_runs, None, not args.no_stock))
        if pg:
            targets.append(prepare("PostgreSQL", args.rows, workdir, args.import_runs, pg, not args.no_stock))
        measure_rounds(targets, args.runs)
        text = render(targets)
        if args.small_rows:
            text += "\n" + growth(targets[0], targets[1]) + "\n"
        header = (
            f"Machine: {machine(pg.version() if pg else None)}. Every command is a whole process: median "
            f"wall time and peak memory of {args.runs} rounds after a warm-up round; '× floor' is the median "
            "of its ratios to the floor run in the same round.\n"
        )
    finally:
        if pg:
            pg.drop_all()
    print(header)
    print(text)
    if not args.no_write:
        write_doc(header + "\n" + text)
    return 0


def write_doc(figures: str) -> None:
    doc = ROOT / "docs" / "benchmarks.md"
    old = doc.read_text(encoding="utf-8") if doc.exists() else ""
    begin, end = "<!-- figures:begin -->", "<!-- figures:end -->"
    block = f"{begin}\n{figures}\n{end}"
    if begin in old and end in old:
        new = old.split(begin)[0] + block + old.split(end, 1)[1]
    else:
        new = old + ("\n" if old else "# Benchmarks\n\n") + block + "\n"
    doc.write_text(new, encoding="utf-8")
    print(f"wrote {doc}", file=sys.stderr)


if __name__ == "__main__":
    raise SystemExit(main())
