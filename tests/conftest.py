"""Shared fixtures: a real database per test (a SQLite file; PostgreSQL too when
PLANNER_TEST_DATABASE_URL is set, as .ci/run does), an isolated home, a CLI runner, and a
self-signed TLS certificate."""

from __future__ import annotations

import gc
import os
import shutil
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from sqlalchemy import create_engine, text

from vocab import IMPORT_REQUIRED_COLUMNS

PG_URL_ENV = "PLANNER_TEST_DATABASE_URL"
PG_SKIP_REASON = f"PostgreSQL tests need {PG_URL_ENV} (e.g. postgresql+psycopg://root@127.0.0.1:5432/test)"


def pytest_configure(config: pytest.Config) -> None:
    """Fewer garbage collections. A test session keeps close to a million objects alive (modules,
    collected tests, their reports); with Python's default thresholds (700, 10, 10) the collector made
    about 30 full passes over them, 0.3 s each, and spent 9 to 11 s of the fast group's 50 s of CPU.
    With these (and the freeze below) it spends about 3.5 s, for about 10 MB more memory at the peak
    (measured with gc.callbacks over the whole fast group)."""
    gc.set_threshold(20_000, 10, 50)


FAST_GROUP = "not slow"  # pyproject's -m: the group a worker per core runs


@pytest.hookimpl(optionalhook=True)  # xdist's hook: a run without xdist (-p no:xdist) still works
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """``-n auto`` (pyproject's addopts): a worker per core for the fast group, and none for any other
    selection (``-m slow``, ``-m ""``, ...) that may hold a slow test. Those kill, time and measure whole
    processes and hold locks for seconds; beside a second worker their deadlines and memory peaks would
    measure the neighbour."""
    if " ".join((config.option.markexpr or "").split()) == FAST_GROUP:
        return None  # xdist's own count: the cores this process may use
    return 0


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Without PLANNER_TEST_DATABASE_URL, a test's PostgreSQL case is skipped before its fixtures are
    set up (a temporary folder and a home each: 650 of them cost about 1.5 s)."""
    if os.environ.get(PG_URL_ENV):
        return
    skip = pytest.mark.skip(reason=PG_SKIP_REASON)
    for item in items:
        callspec = getattr(item, "callspec", None)
        if callspec is not None and callspec.params.get("db_url") == "postgresql":
            item.add_marker(skip)


def pytest_collection_finish(session: pytest.Session) -> None:
    """What collection built lives until the end: out of every later collection (gc.freeze)."""
    gc.collect()
    gc.freeze()


@pytest.fixture(autouse=True)
def isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No test reads or writes the real user's data directory or config, and none speaks the language
    of the machine's locale (a Chinese LANG would make every English answer Chinese): English unless a
    test asks for Chinese."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_DATA_HOME", str(home / ".local" / "share"))
    monkeypatch.setenv("PLANNER_DATA_DIR", str(home / "planner-data"))
    for var in ("PLANNER_DATABASE_URL", "PLANNER_CONFIG", "LC_ALL", "LC_MESSAGES"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("LANG", "C.UTF-8")
    return home


@pytest.fixture
def no_pause_between_requests(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A PLANNER_CONFIG with no politeness pause between two requests to a provider: a CLI refresh
    against mocked answers spends no wall-clock time waiting (AutoDL's default is 0.2 s)."""
    from scrapers.registry import PROVIDERS

    path = tmp_path / "no-pause.toml"
    path.write_text(
        "".join(f"[providers.{name}]\nmin_interval_s = 0\n" for name in PROVIDERS), encoding="utf-8"
    )
    monkeypatch.setenv("PLANNER_CONFIG", str(path))
    return path


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A URL to an empty database: a SQLite file, or a fresh schema in the test PostgreSQL.

    The SQLite file is the test's own copy of a file migrated once per session (the CLI then has no
    migration to run: a fast group of mostly CLI tests spends a third less CPU); a test marked
    ``unmigrated`` gets no file at all, as on a first use. The PostgreSQL schema is always unmigrated."""
    if request.param == "sqlite":
        path = tmp_path / "planner.db"
        if request.node.get_closest_marker("unmigrated") is None:
            shutil.copyfile(request.getfixturevalue("migrated_sqlite"), path)
        yield f"sqlite:///{path}"
        return
    base = os.environ.get(PG_URL_ENV)
    if not base:
        pytest.skip(PG_SKIP_REASON)
    schema = f"t_{uuid.uuid4().hex[:12]}"
    admin = create_engine(base)
    with admin.begin() as conn:
        conn.execute(text(f'CREATE SCHEMA "{schema}"'))
    sep = "&" if "?" in base else "?"
    try:
        yield f"{base}{sep}options=-csearch_path%3D{schema}"
    finally:
        with admin.begin() as conn:
            conn.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
        admin.dispose()


@pytest.fixture(scope="session")
def migrated_sqlite(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A SQLite file migrated to the head revision once per session, copied for each test that
    wants a migrated database (a copy costs 2 ms, a migration about 25 ms of CPU)."""
    from db.engine import ensure_schema, make_engine

    path = tmp_path_factory.mktemp("template") / "migrated.db"
    eng = make_engine(f"sqlite:///{path}")
    ensure_schema(eng)
    eng.dispose()
    return path


@pytest.fixture
def engine(db_url: str, request: pytest.FixtureRequest):
    from db.engine import ensure_schema, make_engine

    eng = make_engine(db_url)
    database = eng.url.database if eng.url.get_backend_name() == "sqlite" else None
    if database and not Path(database).exists():  # an unmigrated test's file: the migrated copy here too
        shutil.copyfile(request.getfixturevalue("migrated_sqlite"), database)
    ensure_schema(eng)
    yield eng
    eng.dispose()


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


@pytest.fixture
def run_cli(runner: CliRunner, db_url: str, tmp_path: Path):
    """Run ``planner --db <test db> ARGS...`` from an empty folder; returns click's Result."""
    from planner.cli import cli

    workdir = tmp_path / "cwd"
    workdir.mkdir(exist_ok=True)

    def run(*args: str, input: str | None = None):
        old = os.getcwd()
        os.chdir(workdir)
        try:
            return runner.invoke(cli, ["--db", db_url, *args], input=input, catch_exceptions=True)
        finally:
            os.chdir(old)

    return run


def write_csv(path: Path, rows: list[dict[str, object]], columns: list[str] | None = None) -> Path:
    """Write an import CSV with the standard header (or ``columns``)."""
    columns = columns or list(IMPORT_REQUIRED_COLUMNS)
    lines = [",".join(columns)]
    for row in rows:
        lines.append(",".join(str(row.get(c, "")) for c in columns))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def price_row(**overrides: object) -> dict[str, object]:
    row: dict[str, object] = {
        "provider": "tencent",
        "region": "ap-beijing",
        "instance_type": "GT4.4XLARGE96",
        "gpu_model": "A100-40GB",
        "gpu_count": 1,
        "billing": "on_demand",
        "price": "28.64",
        "currency": "CNY",
        "observed_at": "2026-11-01",
    }
    row.update(overrides)
    return row


@pytest.fixture(scope="session")
def certificate(tmp_path_factory) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 and localhost, made with the openssl command."""
    if not shutil.which("openssl"):
        pytest.skip("the openssl command is needed to make a test certificate")
    folder = tmp_path_factory.mktemp("tls")
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(
        [
            "openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
            "-nodes", "-keyout", str(key), "-out", str(cert), "-days", "2", "-subj", "/CN=localhost",
            "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost",
        ],
        check=True,
        capture_output=True,
    )  # fmt: skip
    return cert, key
