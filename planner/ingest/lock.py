"""The refresh lock: at most one refresh writes prices at a time, whoever starts it.

Two schedulers, or a scheduler and a person running ``planner refresh``, must not refresh at once. On
SQLite the lock is a file lock (``flock``) on ``<database file>.refresh.lock`` beside the database, so
it holds across processes on one machine; on PostgreSQL it is a session advisory lock, so it holds
across machines that share the database. Both are released by the operating system or the server when
the holder dies, so a crash never leaves a stale lock. The lock file is opened without following a
link (a link planted under its predictable name is refused, never written through) and must be a
regular file.

Whoever refreshes takes it around the refresh (not inside ``run_refresh``, so a caller that already
holds it can refresh); ``planner.ingest.refresh_and_alert`` does, for the command and the scheduler::

    from planner.ingest.lock import refresh_lock

    with refresh_lock(engine, holder="planner refresh"):
        summary = run_refresh(engine, config)

A lock already held raises ``LockBusy`` (a PlannerError: one line, who holds it, what to do).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import errno
import hashlib
import os
import socket
import stat
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TextIO

from sqlalchemy import exc, text
from sqlalchemy.engine import Engine

from planner.config import data_dir
from planner.errors import PlannerError

# The first of the two int4 advisory-lock keys ("PLRF"); the second is derived from the schema, so
# two planners sharing one PostgreSQL database in different schemas do not block each other.
PG_LOCK_CLASS = 0x504C5246
EXIT_LOCK_BUSY = 75  # EX_TEMPFAIL (sysexits.h): try again later


class LockBusy(PlannerError):
    """Another process holds the refresh lock."""

    exit_code = EXIT_LOCK_BUSY

    def __init__(self, holder: str, where: str):
        super().__init__(
            f"another refresh is running ({holder}); not starting a second one",
            hint=f"wait for it to finish, then try again (lock: {where})",
        )
        self.holder = holder
        self.where = where


@contextlib.contextmanager
def refresh_lock(
    engine: Engine,
    holder: str = "planner",
    wait_s: float = 0.0,
    *,
    sleep: Callable[[float], None] = time.sleep,
) -> Iterator[None]:
    """Hold the refresh lock for the database behind ``engine``; LockBusy if it stays taken.

    ``wait_s`` > 0 retries every half second for that long before giving up.
    """
    if engine.url.get_backend_name() == "postgresql":
        with _pg_lock(engine, holder, wait_s, sleep):
            yield
    else:
        with _file_lock(lock_path(engine), holder, wait_s, sleep):
            yield


def lock_path(engine: Engine) -> Path:
    """The lock file: beside a SQLite file, else in the data directory (one per database URL)."""
    database = engine.url.database if engine.url.get_backend_name() == "sqlite" else None
    if database and database != ":memory:" and not database.startswith("file:"):
        return Path(f"{os.path.expanduser(database)}.refresh.lock")

    digest = hashlib.sha256(engine.url.render_as_string(hide_password=True).encode()).hexdigest()[:12]
    return data_dir() / f"refresh-{digest}.lock"


def _describe(holder: str) -> str:
    now = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    return f"{holder}, pid {os.getpid()} on {socket.gethostname()}, since {now}"


@contextlib.contextmanager
def _file_lock(path: Path, holder: str, wait_s: float, sleep: Callable[[float], None]) -> Iterator[None]:
    import fcntl

    deadline = time.monotonic() + wait_s
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        # No O_TRUNC: the holder's description stays readable until we own the lock. O_NOFOLLOW and
        # O_NONBLOCK: a planted link is refused and a planted FIFO cannot hang the open.
        flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
        fd = os.open(path, flags, 0o644)
    except OSError as err:
        reason = "it is a symbolic link" if err.errno == errno.ELOOP else err.strerror
        raise PlannerError(
            f"cannot create the refresh lock {str(path)!r}: {reason}",
            hint="the folder of the database must be writable (or set PLANNER_DATA_DIR to one that is); "
            "remove anything else found under the lock's name",
        ) from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise PlannerError(
            f"the refresh lock {str(path)!r} is not a regular file: refused",
            hint="remove it; the next refresh creates it again",
        )
    fh = os.fdopen(fd, "r+", encoding="utf-8")
    with fh:
        while True:
            try:
                fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise LockBusy(_read_holder(fh), str(path)) from None
                sleep(0.5)
        try:
            fh.seek(0)
            fh.truncate()
            fh.write(_describe(holder) + "\n")
            fh.flush()
            yield
        finally:
            fh.seek(0)
            fh.truncate()
            fh.flush()
            fcntl.flock(fh, fcntl.LOCK_UN)


def _read_holder(fh: TextIO, attempts: int = 20) -> str:
    """Who holds the lock, as its holder wrote it. The holder writes its name just after taking the
    lock, so a process that lost the race by a hair may read an empty file: look again briefly."""
    for attempt in range(attempts):
        try:
            fh.seek(0)
            text_ = fh.read(4096).strip()
        except (OSError, ValueError):
            text_ = ""
        if text_ or attempt == attempts - 1:
            break
        time.sleep(0.05)
    return text_ or "holder unknown"


@contextlib.contextmanager
def _pg_lock(engine: Engine, holder: str, wait_s: float, sleep: Callable[[float], None]) -> Iterator[None]:
    deadline = time.monotonic() + wait_s
    with engine.connect() as conn:
        schema = conn.execute(text("SELECT current_schema()")).scalar() or "public"
        key = _schema_key(schema)
        params = {"c": PG_LOCK_CLASS, "k": key}
        while True:
            got = conn.execute(text("SELECT pg_try_advisory_lock(:c, :k)"), params).scalar()
            conn.commit()  # end the implicit transaction: the session lock outlives it
            if got:
                break
            if time.monotonic() >= deadline:
                raise LockBusy(_pg_holder(conn, key), f"PostgreSQL advisory lock ({PG_LOCK_CLASS}, {key})")
            sleep(0.5)
        # Name the session after the holder, so a second one can say who has the lock.
        name = f"{holder} pid {os.getpid()}@{socket.gethostname()}"[:63]
        try:
            conn.execute(text("SELECT set_config('application_name', :n, false)"), {"n": name})
            conn.commit()
            yield
        finally:
            try:
                conn.execute(text("SELECT pg_advisory_unlock(:c, :k)"), params)
                conn.execute(text("SELECT set_config('application_name', '', false)"))
                conn.commit()
            except exc.DBAPIError:
                pass  # the session is gone, and its lock with it


# Hashed with the schema name into the lock's second key. Stored nowhere but shared by every planner that
# refreshes one database, old and new: changing it would let two versions refresh at once.
SCHEMA_KEY_PREFIX = "planner.refresh"


def _schema_key(schema: str) -> int:
    """A signed int4 derived from the schema name (stable across processes, machines and versions)."""
    value = int.from_bytes(hashlib.sha256(f"{SCHEMA_KEY_PREFIX}:{schema}".encode()).digest()[:4], "big")
    return value - (1 << 32) if value >= (1 << 31) else value


def _pg_holder(conn, key: int) -> str:  # noqa: ANN001 - a SQLAlchemy Connection
    row = conn.execute(
        text(
            "SELECT a.pid, a.application_name, a.client_addr, a.backend_start FROM pg_locks l "
            "JOIN pg_stat_activity a ON a.pid = l.pid WHERE l.locktype = 'advisory' AND l.granted "
            "AND CAST(l.classid AS bigint) = :c AND CAST(l.objid AS bigint) = :o AND l.objsubid = 2"
        ),
        {"c": PG_LOCK_CLASS, "o": key & 0xFFFFFFFF},
    ).first()
    conn.commit()
    if row is None:
        return "holder unknown"
    pid, app, addr, started = row
    since = f", connected since {started:%Y-%m-%d %H:%M:%S %Z}" if started else ""
    return f"{app or 'a session'}, PostgreSQL backend pid {pid} from {addr or 'local socket'}{since}"
