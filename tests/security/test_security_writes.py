"""Writes never follow a planted symbolic link: the ``--save-raw`` files (predictable names), the
folder's manifest, the refresh lock file and the ``.name.PID.tmp`` files beside reports and exports.
A link planted under any of those names leaves the file it points to untouched. ``export --out`` onto
something that is not a regular file (a FIFO, a terminal, ``/dev/stdout``) writes into it in place and
never renames a regular file over it.
"""

from __future__ import annotations

import os
import stat
import threading
from pathlib import Path

import pytest

from planner.errors import PlannerError
from planner.ingest.lock import lock_path, refresh_lock
from reports.files import written_whole
from tests.helpers.replay import RAW, outcome, refresh

SQLITE_ONLY = pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)
VICTIM_TEXT = "precious file: must stay as it is\n"


@pytest.fixture
def victim(tmp_path: Path) -> Path:
    path = tmp_path / "victim.txt"
    path.write_text(VICTIM_TEXT, encoding="utf-8")
    return path


def test_planted_symlinks_save_raw_files_are_never_written_through(engine, tmp_path, victim):
    first = tmp_path / "first"
    refresh(engine, tmp_path, from_raw=RAW, save_raw=first, providers=["tencent"])
    names = sorted(p.name for p in (first / "tencent").iterdir())
    assert names, "the first save wrote nothing"
    planted = tmp_path / "planted"
    (planted / "tencent").mkdir(parents=True)
    (planted / "tencent" / names[0]).symlink_to(victim)  # the name the next save will use
    (planted / "manifest.json").symlink_to(victim)
    summary = refresh(engine, tmp_path, from_raw=RAW, save_raw=planted, providers=["tencent"])
    tencent = outcome(summary, "tencent")
    assert (
        tencent.status == "failed" and "cannot save" in tencent.error and "not overwritten" in tencent.error
    )
    assert victim.read_text(encoding="utf-8") == VICTIM_TEXT
    manifest = planted / "manifest.json"
    assert not manifest.is_symlink() and '"tencent"' in manifest.read_text(encoding="utf-8")


def test_planted_symlinks_save_raw_folder_linked_out_is_refused(engine, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    planted = tmp_path / "planted"
    planted.mkdir()
    (planted / "tencent").symlink_to(elsewhere)
    summary = refresh(engine, tmp_path, from_raw=RAW, save_raw=planted, providers=["tencent"])
    assert outcome(summary, "tencent").status == "failed"
    assert list(elsewhere.iterdir()) == []


@SQLITE_ONLY  # on PostgreSQL the lock is an advisory lock: no file
def test_planted_symlinks_refresh_lock_file_is_refused(engine, victim):
    path = lock_path(engine)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.symlink_to(victim)
    with pytest.raises(PlannerError) as caught, refresh_lock(engine, holder="test"):
        pass
    assert "symbolic link" in caught.value.message
    assert victim.read_text(encoding="utf-8") == VICTIM_TEXT


@SQLITE_ONLY  # on PostgreSQL the lock is an advisory lock: no file
def test_planted_symlinks_refresh_lock_fifo_is_refused(engine):
    path = lock_path(engine)
    path.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(path)
    with pytest.raises(PlannerError) as caught, refresh_lock(engine, holder="test"):
        pass
    assert "not a regular file" in caught.value.message


def test_planted_symlinks_temporary_files_are_never_written_through(tmp_path, victim):
    target = tmp_path / "report.csv"
    (tmp_path / f".report.csv.{os.getpid()}.tmp").symlink_to(victim)
    with written_whole(target) as tmp, open(tmp, "w", encoding="utf-8") as fh:
        fh.write("new report\n")
    assert target.read_text(encoding="utf-8") == "new report\n" and not target.is_symlink()
    assert victim.read_text(encoding="utf-8") == VICTIM_TEXT


def test_planted_symlinks_export_temporary_file(run_cli, tmp_path, victim):
    workdir = tmp_path / "cwd"
    workdir.mkdir(exist_ok=True)
    (workdir / f".prices.csv.{os.getpid()}.tmp").symlink_to(victim)
    result = run_cli("export", "--out", "prices.csv")
    assert result.exit_code == 0, result.output
    assert (workdir / "prices.csv").read_text(encoding="utf-8").startswith("provider,")
    assert victim.read_text(encoding="utf-8") == VICTIM_TEXT


def test_planted_symlinks_export_onto_a_fifo_writes_in_place(run_cli, tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()), daemon=True)
    reader.start()
    result = run_cli("export", "--out", str(fifo))
    reader.join(timeout=30)
    assert result.exit_code == 0, result.output
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)  # still a FIFO, not a regular file renamed over it
    assert received and received[0].startswith(b"provider,")
    assert not list(tmp_path.glob(".pipe.*.tmp"))


def test_planted_symlinks_migration_lock_is_refused(tmp_path, victim):
    from planner.config import load_config
    from planner.errors import DatabaseError
    from planner.storage import open_database

    database = tmp_path / "fresh.db"
    Path(f"{database}.migrate.lock").symlink_to(victim)
    with pytest.raises(DatabaseError) as caught:
        open_database(load_config(env={}, cwd=tmp_path), f"sqlite:///{database}")
    assert "migrate.lock" in caught.value.message
    assert victim.read_text(encoding="utf-8") == VICTIM_TEXT
