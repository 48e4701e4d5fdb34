"""Real ``planner`` processes killed with SIGKILL at random points, on SQLite and PostgreSQL.

Three workloads: ``planner refresh --from-raw tests/fixtures/raw`` over yesterday's prices,
``planner import`` of a 30,000-row file, and the very first command on an empty database (the schema
migration). Each is killed either after a random delay (a timer in this process) or at a random SQL
statement (the process kills itself with SIGKILL just before or after statement k, so the write
phase is hit as often as the start-up). The randomness is seeded (``PLANNER_FAULT_SEED``, default 7)
and the seed is in every failure message.

After every kill: SQLite's ``integrity_check`` and ``foreign_key_check`` pass; every price stored
before is still there with the same value; no run is half stored (a finished run holds exactly the
prices it counts, an interrupted one holds none); and the next refresh or import, run normally,
completes and stores everything.
"""

from __future__ import annotations

import datetime as dt
import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import func, select, text

from db.engine import make_engine
from db.schema import scrape_runs
from tests.helpers.db_checks import assert_intact, last_seen, stored
from tests.helpers.db_edits import age
from tests.helpers.disk import _big_csv
from tests.helpers.replay import EXPECTED_STORED_BY_DEFAULT, RAW, REPLAY_DAYS, refresh

pytestmark = pytest.mark.slow

SEED = int(os.environ.get("PLANNER_FAULT_SEED", "7"))
ITERATIONS = int(os.environ.get("PLANNER_FAULT_ITERATIONS", "8"))
LOCK_BUSY = 75

# Runs the real command line; with PLANNER_TEST_KILL_AT=k it sends itself SIGKILL around SQL statement k,
# with PLANNER_TEST_COUNT_TO=file it writes how many statements it ran.
WRAPPER = r"""
import atexit, os, signal, sys
from sqlalchemy import event
from sqlalchemy.engine import Engine

kill_at = int(os.environ.get("PLANNER_TEST_KILL_AT", "0"))
after = os.environ.get("PLANNER_TEST_KILL_AFTER") == "1"
seen = [0]

def count(*_args):
    seen[0] += 1
    if seen[0] == kill_at:
        os.kill(os.getpid(), signal.SIGKILL)

event.listen(Engine, "after_cursor_execute" if after else "before_cursor_execute", count)
if os.environ.get("PLANNER_TEST_COUNT_TO"):
    atexit.register(lambda: open(os.environ["PLANNER_TEST_COUNT_TO"], "w").write(str(seen[0])))
sys.argv = ["planner", *sys.argv[1:]]
from planner.cli import main
main()
"""


def planner(db_url: str, *args: str, workdir: Path, **env: str) -> subprocess.Popen:
    environment = {**os.environ, "PLANNER_DATA_DIR": str(workdir / "data"), "HOME": str(workdir), **env}
    environment.pop("PLANNER_DATABASE_URL", None)
    return subprocess.Popen(
        [sys.executable, "-c", WRAPPER, "--db", db_url, *args],
        cwd=workdir,
        env=environment,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def run_to_the_end(
    db_url: str, *args: str, workdir: Path, retry_busy_s: float = 15.0
) -> subprocess.CompletedProcess:
    """Run normally; a lock still held by a just-killed PostgreSQL session is waited out (it is released
    as soon as the server notices the client is gone)."""
    deadline = time.monotonic() + retry_busy_s
    while True:
        process = planner(db_url, *args, workdir=workdir)
        out, err = process.communicate(timeout=300)
        if process.returncode != LOCK_BUSY or time.monotonic() > deadline:
            return subprocess.CompletedProcess(process.args, process.returncode, out, err)
        time.sleep(0.2)


def statements_of(db_url: str, *args: str, workdir: Path) -> int:
    counter = workdir / "count.txt"
    process = planner(db_url, *args, workdir=workdir, PLANNER_TEST_COUNT_TO=str(counter))
    _, err = process.communicate(timeout=300)
    assert process.returncode in (0, 1), err
    return int(counter.read_text())


def kill(process: subprocess.Popen, delay_s: float) -> int:
    time.sleep(delay_s)
    if process.poll() is None:
        os.kill(process.pid, signal.SIGKILL)
    process.communicate(timeout=60)
    return process.returncode


# --- what must hold after every kill ---------------------------------------------------------------


@pytest.fixture
def fresh(db_url, tmp_path) -> Iterator[tuple[str, Path, random.Random]]:
    workdir = tmp_path / "work"
    workdir.mkdir()
    yield db_url, workdir, random.Random(SEED)


def _kill_point(
    rng: random.Random, i: int, total: int, duration_s: float
) -> tuple[str, dict[str, str], float]:
    """Alternately a random statement (before or after it runs) and a random moment."""
    if i % 2 == 0:
        k = rng.randint(1, total)
        after = rng.choice(["0", "1"])
        return (
            f"statement {k} ({'after' if after == '1' else 'before'})",
            {
                "PLANNER_TEST_KILL_AT": str(k),
                "PLANNER_TEST_KILL_AFTER": after,
            },
            0.0,
        )
    delay = rng.uniform(0.05, duration_s)
    return f"after {delay:.2f} s", {}, delay


def test_a_refresh_killed_anywhere_loses_nothing_and_the_next_one_completes(fresh, engine, tmp_path):
    db_url, workdir, rng = fresh
    assert refresh(engine, tmp_path, from_raw=RAW).exit_code == 0  # yesterday's night
    age(engine)
    args = ("refresh", "--from-raw", str(RAW))
    total = statements_of(db_url, *args, workdir=workdir)  # also today's first refresh
    age(engine)
    started = time.monotonic()
    assert run_to_the_end(db_url, *args, workdir=workdir).returncode == 0
    duration = time.monotonic() - started
    killed = 0
    for i in range(ITERATIONS):
        age(engine)
        before = stored(engine)
        point, env, delay = _kill_point(rng, i, total, duration)
        where = f"seed {SEED}, iteration {i}, refresh killed {point}"
        code = kill(planner(db_url, *args, workdir=workdir, **env), delay)
        killed += code == -signal.SIGKILL
        assert_intact(engine, db_url, before, where)
        done = run_to_the_end(db_url, *args, workdir=workdir)
        assert done.returncode == 0, f"{where}: the next refresh failed: {done.stdout}{done.stderr}"
        assert "database is locked" not in done.stderr
        assert_intact(engine, db_url, before, where + ", then refreshed")
        seen = last_seen(engine)  # every price seen again on the replay's day (confirmed or stored)
        for provider, count in EXPECTED_STORED_BY_DEFAULT.items():
            assert sum(1 for r in seen if r[0] == provider and r[1] == REPLAY_DAYS[provider]) == count, (
                where,
                provider,
            )
    assert killed >= ITERATIONS // 2, f"only {killed} of {ITERATIONS} runs were killed before they ended"


def _block(index: int) -> dt.date:
    """The first day of the ``index``-th file's 300 days (files never share a day)."""
    return dt.date(2001, 1, 1) + dt.timedelta(days=400 * index)


def test_an_import_killed_anywhere_stores_nothing_and_the_next_one_completes(fresh, engine):
    db_url, workdir, rng = fresh
    first = _big_csv(workdir / "big-0.csv", _block(0))
    total = statements_of(db_url, "import", str(first), workdir=workdir)
    started = time.monotonic()
    again = run_to_the_end(db_url, "import", str(_big_csv(workdir / "big-1.csv", _block(1))), workdir=workdir)
    assert again.returncode == 0, again.stderr
    duration = time.monotonic() - started
    killed = 0
    for i in range(ITERATIONS):
        before = stored(engine)
        with engine.connect() as conn:
            runs_before = conn.execute(select(func.count()).select_from(scrape_runs)).scalar_one()
        big = _big_csv(workdir / f"big-{i + 2}.csv", _block(i + 2))
        point, env, delay = _kill_point(rng, i, total, duration)
        where = f"seed {SEED}, iteration {i}, import killed {point}"
        code = kill(planner(db_url, "import", str(big), workdir=workdir, **env), delay)
        killed += code == -signal.SIGKILL
        after = assert_intact(engine, db_url, before, where)
        with engine.connect() as conn:
            runs_after = conn.execute(select(func.count()).select_from(scrape_runs)).scalar_one()
        added = len(after) - len(before)  # a kill that lands after the commit finds the file stored, whole
        assert added in (0, 30_000), f"{where}: {added} of the file's 30000 prices stored"
        assert added or runs_after == runs_before, f"{where}: a killed import left a run behind"
        done = run_to_the_end(db_url, "import", str(big), workdir=workdir)
        assert done.returncode == 0, f"{where}: the next import failed: {done.stderr}"
        expected_new = 30_000 - added
        assert f"{expected_new} new price(s)" in done.stdout, (where, done.stdout)
        assert len(assert_intact(engine, db_url, before, where + ", then imported")) == len(before) + 30_000
    assert killed >= ITERATIONS // 2, f"only {killed} of {ITERATIONS} imports were killed before they ended"


def test_the_first_command_killed_during_the_migration_leaves_a_usable_database(db_url, tmp_path, request):
    """The schema is created on first use; a kill half-way must not leave a database no command can open."""
    rng = random.Random(SEED)
    probe = tmp_path / "probe"
    probe.mkdir()
    fresh_url = _fresh_database(db_url, tmp_path, "count")
    total = statements_of(fresh_url, "runs", workdir=probe)
    points = sorted(set(rng.sample(range(1, total + 1), min(5, total))) | {total // 2})
    broken = []
    for k in points:
        workdir = tmp_path / f"k{k}"
        workdir.mkdir()
        url = _fresh_database(db_url, tmp_path, f"k{k}")
        process = planner(
            url, "runs", workdir=workdir, PLANNER_TEST_KILL_AT=str(k), PLANNER_TEST_KILL_AFTER="1"
        )
        process.communicate(timeout=120)
        after = planner(url, "runs", workdir=workdir)
        out, err = after.communicate(timeout=120)
        if after.returncode != 0:
            broken.append(f"seed {SEED}: killed after statement {k} of {total}: {err.strip()}")
    assert not broken, broken


def _fresh_database(db_url: str, tmp_path: Path, name: str) -> str:
    """An empty database of the same kind as ``db_url``: a new SQLite file or a new PostgreSQL schema."""
    if db_url.startswith("sqlite"):
        return f"sqlite:///{tmp_path / f'{name}.db'}"
    engine = make_engine(db_url)
    schema = f"{db_url.rsplit('%3D', 1)[1]}_{name}"
    with engine.begin() as conn:
        conn.execute(text(f'CREATE SCHEMA "{schema}"'))
    engine.dispose()
    return db_url.rsplit("%3D", 1)[0] + "%3D" + schema


@pytest.fixture(autouse=True)
def _drop_extra_schemas(db_url):
    yield
    if db_url.startswith("postgresql"):
        engine = make_engine(db_url)
        base = db_url.rsplit("%3D", 1)[1]
        with engine.begin() as conn:
            for (schema,) in conn.execute(
                text("SELECT nspname FROM pg_namespace WHERE nspname LIKE :p"), {"p": f"{base}\\_%"}
            ):
                conn.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
        engine.dispose()
