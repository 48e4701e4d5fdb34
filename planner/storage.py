"""Opening the database the configuration names, with readable errors instead of driver tracebacks."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

from sqlalchemy import exc
from sqlalchemy.engine import Engine, make_url

from db.engine import (
    READ_ONLY_REASONS,
    SchemaTooNew,
    disk_is_full,
    ensure_schema,
    make_engine,
    mask_password,
    read_only_engine,
    redact_url,
)
from planner.config import Config
from planner.errors import DatabaseError, UsageError
from planner.folders import ensure_folder
from planner.wording import Phrase

SQLITE_NOTADB = 26  # sqlite3.SQLITE_NOTADB: "file is not a database" (a damaged database is another code)


def display_url(url: str) -> str:
    """The URL with any password masked, for messages (whole, even one with an unescaped ``@``)."""
    return redact_url(url)


def open_database(config: Config, url: str | None = None, say: Callable[[str], None] | None = None) -> Engine:
    """An engine for ``url`` (else the configured one), migrated to the current schema. A SQLite file's
    missing folder is created; when the user named it (``url``, PLANNER_DATABASE_URL or [database] url),
    ``say`` gets a line saying so. The default database's folder (``config.data_dir``) is the tool's
    own, created quietly on a first run."""
    named = bool(url or config.section("database").get("url"))
    url = url or config.database_url
    folder = sqlite_folder(url)
    try:
        if folder is not None:
            ensure_folder(folder, "the database", say if named else None)
        engine = make_engine(url, busy_timeout_s=float(config.section("database")["busy_timeout_s"]))
    except (exc.ArgumentError, exc.NoSuchModuleError, ValueError) as err:
        reason = "its port is not a number" if "int()" in str(err) else mask_password(str(err), url)
        raise UsageError(
            f"cannot use database URL {display_url(url)!r}: {reason}",
            hint="use sqlite:///path/to/file.db or postgresql+psycopg://user@host/dbname",
        ) from None
    except OSError as err:
        raise DatabaseError(
            f"cannot open database {display_url(url)}: {err.strerror or err}",
            hint=Phrase("check the folder exists and is writable, or choose another {db}"),
        ) from None
    except ImportError as err:
        raise UsageError(
            f"the driver for {display_url(url)!r} is not installed ({err.name})",
            hint="for PostgreSQL: pip install 'gpu-planner[postgres]'",
        ) from None
    try:
        try:
            ensure_schema(engine)
        except exc.OperationalError:
            full = _on_a_full_disk(engine)
            if full is None:
                raise
            engine.dispose()
            engine = read_only_engine(full, f"the disk holding {full} is full")
            ensure_schema(engine)
    except SchemaTooNew as err:
        raise DatabaseError(
            f"the database {display_url(url)} was created by a newer planner (schema {err})",
            hint="upgrade planner",
        ) from None
    except exc.DBAPIError as err:
        if folder is not None and getattr(err.orig, "sqlite_errorcode", None) == SQLITE_NOTADB:
            # A file the URL names that is not SQLite at all: the wrong file (exit 2), not the folder.
            raise UsageError(
                f"cannot open database {display_url(url)}: the file is not a SQLite database",
                hint=Phrase("give {db} a planner database, or a new file name to start one"),
            ) from None
        hint: str = Phrase(
            "check {db} / PLANNER_DATABASE_URL / [database] url, and that the server is running"
        )
        if folder is not None:  # no server: a file, and SQLite writes its journal beside it
            hint = f"the folder {folder} and the file in it must be writable (SQLite writes beside the file)"
        raise DatabaseError(
            f"cannot open database {display_url(url)}: {mask_password(_first_line(err.orig), url)}",
            hint=hint,
        ) from None
    except OSError as err:  # the migration lock beside a SQLite file: unwritable, or a planted link
        raise DatabaseError(
            f"cannot lock {display_url(url)} to migrate it: {err.strerror or err} ({err.filename})",
            hint="the database's folder must be writable; remove anything else found under that name",
        ) from None
    read_only = READ_ONLY_REASONS.get(engine)
    if read_only:
        print(
            f"Note: {read_only}; the database is opened read-only (it can be read, not written).",
            file=sys.stderr,
        )
    return engine


def sqlite_folder(url: str) -> Path | None:
    """The folder of a SQLite file URL; None for a server, memory, or a URL that does not parse."""
    try:
        parsed = make_url(url)
    except (exc.ArgumentError, ValueError):  # a bad URL is refused, with its reason, by make_engine
        return None
    database = parsed.database
    if parsed.get_backend_name() != "sqlite" or not database or database == ":memory:":
        return None
    if database.startswith("file:"):
        return None
    return Path(database).expanduser().parent


def _on_a_full_disk(engine: Engine) -> Path | None:
    """The SQLite file of ``engine`` when it could not be opened because its disk is full, else None."""
    database = engine.url.database if engine.url.get_backend_name() == "sqlite" else None
    if not database or database == ":memory:" or database.startswith("file:"):
        return None
    path = Path(database).expanduser()
    return path if path.is_file() and disk_is_full(path) else None


def _first_line(error: BaseException | None) -> str:
    text = str(error or "").strip()
    return text.splitlines()[0] if text else type(error).__name__
