"""Engines for a database URL, with SQLite tuned for one writer beside many readers, and the schema
brought up to date on first use.

The version check is one indexed SELECT and imports nothing heavy; Alembic is imported only when a
migration has to run, under a lock (a file lock beside a SQLite file, an advisory lock on PostgreSQL)
so two processes starting at once do not both migrate.
"""

from __future__ import annotations

import contextlib
import os
import re
import warnings
import weakref
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote, unquote_plus

from sqlalchemy import create_engine, event, exc, text
from sqlalchemy.engine import Engine, make_url

from db.schema import HEAD_REVISION

# SQLite has no DECIMAL type; Numeric(18, 6) round-trips through a float and is quantised back to six
# places on the way out, which is exact for every price we store. Silence the dialect's reminder.
warnings.filterwarnings("ignore", message=r"Dialect sqlite\+pysqlite does \*not\* support Decimal")

MIGRATION_LOCK_KEY = 0x504C414E  # "PLAN": the PostgreSQL advisory-lock key for migrations


# Engines opened read-only because writing is impossible, and why (say so to the user).
READ_ONLY_REASONS: weakref.WeakKeyDictionary[Engine, str] = weakref.WeakKeyDictionary()


def on_read_only_file_system(path: Path) -> bool:
    """True when ``path``'s file system is mounted read-only."""
    try:
        return bool(os.statvfs(path.parent).f_flag & os.ST_RDONLY)
    except OSError:
        return False


class SchemaTooNew(Exception):
    """The database was migrated by a newer planner than this one."""


def _password_split(url: str) -> tuple[str, str | None, str]:
    """(what comes before the password, the password or None, what comes after it), read from the text
    itself rather than parsed: a password holding an unescaped ``@`` or ``:`` (which a URL parser
    splits at the wrong place, or refuses) runs from the first ``:`` after the user to the last ``@``
    before the host."""
    scheme, sep, rest = url.partition("://")
    if not sep or rest.startswith("/"):  # no host, so no password (sqlite:///path)
        return url, None, ""
    end = min([rest.index(c) for c in "?#" if c in rest] + [len(rest)])
    at = rest.rfind("@", 0, end)
    user, colon, password = rest[:at].partition(":") if at >= 0 else ("", "", "")
    if not colon:
        return url, None, ""
    return f"{scheme}://{user}:", password, rest[at:]


# Query parameters that carry a secret (libpq and psycopg take ``?password=...``, ``?sslpassword=...``).
_SECRET_PARAMS = re.compile(r"([?&;](?:ssl)?password=)([^&#;]*)", re.IGNORECASE)


def _query_secrets(url: str) -> list[str]:
    """The values of the URL's password parameters, as written and decoded."""
    values = [m.group(2) for m in _SECRET_PARAMS.finditer(url) if m.group(2)]
    return values + [unquote_plus(v) for v in values]


def redact_url(url: str) -> str:
    """``url`` with its password, all of it, replaced by ``***``, for messages: the one before the host
    and any given as a query parameter (``?password=...``)."""
    before, password, after = _password_split(url)
    url = url if password is None else f"{before}***{after}"
    return _SECRET_PARAMS.sub(lambda m: m.group(1) + ("***" if m.group(2) else ""), url)


def mask_password(text: str, url: str) -> str:
    """``text`` (a driver's error, say) without the password of ``url`` or any piece of it: a driver
    that splits an unescaped ``@`` at the wrong place quotes the rest of the password as the host; one
    given as a query parameter is masked too."""
    _, password, _ = _password_split(url)
    secrets = [*_query_secrets(url), *([password] if password else [])]
    pieces = {piece for secret in secrets for piece in (secret, *secret.split("@"), *secret.split(":"))}
    if not pieces:
        return text
    for piece in sorted((p for p in pieces if len(p) >= 3), key=len, reverse=True):
        text = text.replace(piece, "***")
    return text


def make_engine(url: str, busy_timeout_s: float = 30.0) -> Engine:
    """An engine for ``url``; a SQLite file's folder is created, WAL and a busy timeout are set."""
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        database = parsed.database
        if database and database != ":memory:" and not database.startswith("file:"):
            path = Path(database).expanduser()
            path.parent.mkdir(parents=True, exist_ok=True)
            if path.is_file() and on_read_only_file_system(path):
                return read_only_engine(path, f"{path} is on a read-only file system", busy_timeout_s)
        engine = create_engine(url, connect_args={"timeout": busy_timeout_s})
        _tune_sqlite(engine, busy_timeout_s)
        return engine
    return create_engine(url, pool_pre_ping=True)


def read_only_engine(path: Path, reason: str, busy_timeout_s: float = 30.0) -> Engine:
    """A SQLite file opened read-only and immutable, because ``reason`` (its disk is read-only or full).

    WAL needs its -shm file beside the database even to read; where that file cannot be made every
    read fails. Nothing can change the file there, so SQLite may read it as immutable: reads answer,
    writes fail with "attempt to write a readonly database".
    """
    url = f"sqlite:///file:{quote(str(path.resolve()))}?mode=ro&immutable=1&uri=true"
    engine = create_engine(url, connect_args={"timeout": busy_timeout_s})
    READ_ONLY_REASONS[engine] = reason
    return engine


def disk_is_full(path: Path, below_bytes: int = 1 << 20) -> bool:
    """True when the file system of ``path`` has less than ``below_bytes`` free."""
    try:
        stats = os.statvfs(path.parent)
    except OSError:
        return False
    return stats.f_bavail * stats.f_frsize < below_bytes


def _tune_sqlite(engine: Engine, busy_timeout_s: float) -> None:
    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn, _record):  # noqa: ANN001 - DBAPI types
        cur = dbapi_conn.cursor()
        cur.execute(f"PRAGMA busy_timeout = {int(busy_timeout_s * 1000)}")
        cur.execute("PRAGMA journal_mode = WAL")
        cur.execute("PRAGMA synchronous = NORMAL")
        cur.execute("PRAGMA foreign_keys = ON")
        cur.close()


def current_revision(engine: Engine) -> str | None:
    """The Alembic revision the database is at, or None for an empty database."""
    with engine.connect() as conn:
        try:
            return conn.execute(text("SELECT version_num FROM alembic_version")).scalar()
        except exc.DBAPIError:
            return None


def ensure_schema(engine: Engine) -> bool:
    """Migrate the database to HEAD_REVISION if needed; True when a migration ran."""
    if current_revision(engine) == HEAD_REVISION:
        return False
    with _migration_lock(engine):
        revision = current_revision(engine)
        if revision == HEAD_REVISION:
            return False
        if revision is not None and not _is_known_revision(revision):
            raise SchemaTooNew(revision)
        upgrade(engine)
    return True


def upgrade(engine: Engine, revision: str = "head") -> None:
    """Run Alembic's upgrade on ``engine`` (imports Alembic)."""
    from alembic import command

    config = alembic_config()
    with engine.begin() as conn:
        if conn.dialect.name == "sqlite":
            # pysqlite runs DDL outside a transaction unless one is open: a process killed half-way
            # through the first migration would leave tables without alembic_version for good.
            conn.exec_driver_sql("BEGIN IMMEDIATE")
        config.attributes["connection"] = conn
        command.upgrade(config, revision)


def alembic_config():  # noqa: ANN201 - alembic.config.Config, imported lazily
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(Path(__file__).parent / "migrations"))
    return config


def _is_known_revision(revision: str) -> bool:
    versions = Path(__file__).parent / "migrations" / "versions"
    return any(p.name.startswith(f"{revision}_") for p in versions.glob("*.py"))


@contextlib.contextmanager
def _migration_lock(engine: Engine) -> Iterator[None]:
    backend = engine.url.get_backend_name()
    if backend == "postgresql":
        with engine.connect() as conn:
            conn.execute(text("SELECT pg_advisory_lock(:k)"), {"k": MIGRATION_LOCK_KEY})
            try:
                yield
            finally:
                conn.execute(text("SELECT pg_advisory_unlock(:k)"), {"k": MIGRATION_LOCK_KEY})
        return
    database = engine.url.database if backend == "sqlite" else None
    if not database or database == ":memory:" or database.startswith("file:"):
        yield
        return
    import fcntl

    lock_path = f"{os.path.expanduser(database)}.migrate.lock"
    # Never through a link planted under this predictable name (ELOOP: an OSError, as any open's).
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, 0o644)
    with os.fdopen(fd, "r+") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)
