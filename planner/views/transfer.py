"""``planner import`` for people: one line on what the file brought."""

from __future__ import annotations


def render_import(file: str, result) -> str:  # noqa: ANN001 - planner.ingest.importer.ImportResult
    """One line: what the import of ``file`` read, stored, found already present and replaced."""
    return (
        f"Imported {file}: {result.rows} row(s), {result.stored} new price(s), "
        f"{result.already_present} already present, "
        + (
            f"{result.replaced} replaced (the old rows kept in price_corrections, run {result.run_id}), "
            if result.replaced
            else ""
        )
        + f"{result.changed} changed, {result.instances} instance(s)."
    )
