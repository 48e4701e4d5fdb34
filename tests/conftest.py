"""Shared fixtures: a real database per test (a SQLite file; PostgreSQL too when
PLANNER_TEST_DATABASE_URL is set, as .ci/run does), an isolated home, a CLI runner, and a
self-signed TLS certificate."""

from __future__ import annotations

import os
import shutil
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from sqlalchemy import create_engine, text

from planner.importer import REQUIRED_COLUMNS

PG_URL_ENV = "PLANNER_TEST_DATABASE_URL"


@pytest.fixture(autouse=True)
def isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No test reads or writes the real user's data directory or config."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_DATA_HOME", str(home / ".local" / "share"))
    monkeypatch.setenv("PLANNER_DATA_DIR", str(home / "planner-data"))
    for var in ("PLANNER_DATABASE_URL", "PLANNER_CONFIG"):
        monkeypatch.delenv(var, raising=False)
    return home


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A URL to an empty database: a SQLite file, or a fresh schema in the test PostgreSQL."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'planner.db'}"
        return
    base = os.environ.get(PG_URL_ENV)
    if not base:
        pytest.skip(
            f"PostgreSQL tests need {PG_URL_ENV} (e.g. postgresql+psycopg://root@127.0.0.1:5432/test)"
        )
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


@pytest.fixture
def engine(db_url: str):
    from db.engine import ensure_schema, make_engine

    eng = make_engine(db_url)
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
    columns = columns or list(REQUIRED_COLUMNS)
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
