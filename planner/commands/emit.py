"""The one way a command prints its result: ``emit(result, fmt, table=..., csv=...)``.

JSON is the result's own record (``to_dict()``, a dataclass, or the value itself), CSV one row per
record under fixed columns, the table whatever the command renders for people. Every command that prints
data goes through here, so ``--format`` means the same everywhere and no command grows its own ladder.
"""

from __future__ import annotations

import dataclasses
import os
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

import click

if TYPE_CHECKING:
    from sqlalchemy.engine import Engine

    from planner.app import App
    from planner.ingest.snapshot import SnapshotInfo

from planner.output import csv_text, dumps_json
from planner.views.typed import typed_tree

R = TypeVar("R")
CsvRows = tuple[Iterable[Mapping[str, Any]], Sequence[str]]


def emit(
    result: R,
    fmt: str,
    *,
    table: Callable[[R], str],
    csv: Callable[[R], CsvRows] | None = None,
    json: Callable[[R], Any] | None = None,
) -> None:
    """Print ``result`` as ``fmt`` (table, json or csv) on standard output.

    ``table`` renders it for people; ``csv`` gives (rows, columns), by default the JSON records when
    they are a list of flat mappings; ``json`` the value to dump, by default :func:`as_json`.
    """
    fmt = fmt.lower()
    if fmt == "json":  # notes and reasons from the library name the flags typed, as in the table
        click.echo(dumps_json(typed_tree(json(result) if json is not None else as_json(result))))
    elif fmt == "csv":
        rows, columns = csv(result) if csv is not None else _records_csv(as_json(result))
        click.echo(csv_text([typed_tree(dict(row)) for row in rows], columns), nl=False)
    else:
        text = table(result)
        if text:
            click.echo(text)


def as_json(result: Any) -> Any:
    """A result's JSON record: its ``to_dict()``, a dataclass's fields, or the value itself."""
    if hasattr(result, "to_dict"):
        return result.to_dict()
    if dataclasses.is_dataclass(result) and not isinstance(result, type):
        return dataclasses.asdict(result)
    if isinstance(result, list | tuple):
        return [as_json(item) for item in result]
    return result


def _records_csv(records: Any) -> CsvRows:
    rows = list(records)
    return rows, list(rows[0]) if rows else []


def note_loaded(loaded: SnapshotInfo | None) -> None:
    """The one line a reading command prints when it loaded the bundled snapshot into an empty database."""
    if loaded:
        click.echo(f"Database empty: loaded the {loaded.label} ({loaded.rows} prices).", err=True)


def reading_engine(app: App) -> Engine:
    """``app.reading_engine()`` and, when it loaded the snapshot, the line saying so."""
    engine, loaded = app.reading_engine()
    note_loaded(loaded)
    return engine


def silence_stdout() -> None:
    """Point standard output at /dev/null, so the interpreter's last flush at exit fails no more."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, sys.stdout.fileno())
    finally:
        os.close(devnull)


def quiet_exit_on_closed_pipe() -> NoReturn:
    """Exit 0 with nothing on standard error when the reader of standard output has gone (``| head``):
    it read what it wanted, as with any Unix filter."""
    silence_stdout()
    sys.exit(0)
