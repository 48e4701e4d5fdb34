"""``planner import`` and ``planner export``: prices in and out as CSV, in one format.

A database that refuses the import's write (full disk, read-only file or server) is a one-line error;
the import is one transaction, so nothing of the file is stored. ``export --out`` writes a temporary
file beside the target and renames it, so the file is whole or untouched; a target that is not a
regular file (a FIFO, ``/dev/stdout``, a terminal) is written in place instead, never replaced by a
file, and a block device or a socket is refused.
"""

from __future__ import annotations

import sys

import click

from planner import catalog
from planner.commands.emit import emit, quiet_exit_on_closed_pipe
from planner.commands.options import format_option, gpu_filter_option, provider_option
from planner.errors import write_error
from planner.providers import canonical_provider
from planner.views.transfer import render_import


@click.command("import")
@click.argument("file", metavar="FILE.csv")
@click.option(
    "--replace",
    is_flag=True,
    help="Store the file's price where another is stored for the same instance, billing mode and day "
    "(a correction): only the columns the file has change, and every old row is kept whole in the "
    "price_corrections table.",
)
@format_option
@click.pass_obj
def import_cmd(app, file: str, replace: bool, fmt: str) -> None:  # noqa: ANN001
    """Import prices from a CSV file, all or nothing.

    Columns (header row, any order): provider, region, instance_type, gpu_model, gpu_count, billing,
    price, currency, observed_at; optional vcpus, memory_gb, source, and what `planner export` adds:
    gpu_note, tiers, median_price, stock_status, idle_gpus, total_gpus, orderable_gpus,
    max_idle_gpus_per_machine, max_orderable_gpus_per_machine. `price` is the
    whole instance's price for one unit of `billing` (on_demand and spot per hour; daily, weekly,
    monthly, yearly per period); numbers use a point for decimals (1,234.5 and 1234.5, not 8,68). One bad row
    and nothing is stored; the error names its line (the header is line 1). Importing the same file
    twice adds nothing; a row whose day is stored at another price is refused with its line, unless
    --replace.

    \b
    Examples:
      planner import prices.csv
      planner import --replace corrected.csv
    """
    from planner.ingest.importer import import_file

    result = import_file(app.engine(), file, app.config.section("fx"), replace=replace)
    emit(
        result.__dict__,
        fmt,
        table=lambda r: render_import(file, result),
        csv=lambda r: ([r], list(r)),
    )


@click.command("export")
@click.option(
    "--out",
    "out",
    type=click.Path(dir_okay=False, writable=True),
    help="Write to this file (default: standard output).",
)
@gpu_filter_option
@provider_option
@click.pass_obj
def export_cmd(app, out: str | None, gpus: tuple[str, ...], providers: tuple[str, ...]) -> None:  # noqa: ANN001
    """Export every stored price observation as CSV, in the import format.

    With everything a quote uses (tiers, a marketplace's median, GPU notes, stock), so that
    `planner import` of the file into another database (SQLite to PostgreSQL) gives the same answers.
    Text that a spreadsheet would run as a formula starts with a quote (taken off again by import).

    \b
    Examples:
      planner export --out prices.csv
      planner export --gpu H800 --provider autodl
    """
    from planner.answers.export import export_to_path, write_export

    models = [s.model.name for q in gpus for s in catalog.resolve_query(q)]
    names = [canonical_provider(p) for p in providers]
    engine = app.engine()

    try:
        if not out:
            try:
                count = write_export(engine, sys.stdout, models, names)
                sys.stdout.flush()  # a closed pipe is met here, not in the interpreter's last flush
            except BrokenPipeError:  # `planner export | head -1`: the reader has what it wanted
                quiet_exit_on_closed_pipe()
        else:
            count = export_to_path(engine, out, models, names)
    except OSError as err:
        raise write_error(
            f"cannot write {out or 'the export'!r}: {err.strerror or err}; nothing was written",
            err,
            hint="check the disk has room",
        ) from None
    if out:
        click.echo(f"Exported {count} price observation(s) to {out}.", err=True)
