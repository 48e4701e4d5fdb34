"""The refresh lock's PostgreSQL keys are shared by every planner that refreshes one database, whatever
its version: a key that changed with a release would let an old scheduler and a new ``planner refresh``
write prices at the same time."""

from __future__ import annotations

from planner.ingest.lock import PG_LOCK_CLASS, _schema_key


def test_the_advisory_lock_keys_stay_what_earlier_versions_took():
    assert PG_LOCK_CLASS == 0x504C5246  # "PLRF"
    assert _schema_key("public") == -1336220878
    assert _schema_key("t_0123456789ab") != _schema_key("public")  # one lock per schema
