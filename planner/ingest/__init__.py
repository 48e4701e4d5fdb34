"""Ingest: prices into the database (refresh, import, snapshot), normalised in one place."""
