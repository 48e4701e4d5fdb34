"""A ``--from-raw`` folder is untrusted input: its manifest cannot set options a replay does not take
(Aliyun's ``state_path`` would rewrite any file), a recorded body or sidecar is read only when it is a
regular file inside the folder (never through a link, never a device or a FIFO) and not larger than
the cap, and a folder without a manifest is a usage error.

Each class of the hostile folder is one case; every one must fail that provider (or the command, for
the manifest) with a clear line, leak nothing of what a link points to and never hang.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sqlalchemy import select

from db.schema import scrape_runs
from planner.errors import UsageError
from planner.ingest.manifest import read_manifest
from scrapers.recording import MAX_RESPONSE_BYTES
from tests.helpers.hostile_files import (
    LOCAL_SECRET,
    _fifo,
    _link_to_dev_zero,
    _link_to_local_file,
    _oversized,
)
from tests.helpers.replay import outcome, recordings, refresh, replay_copy


def _manifest(folder: Path) -> dict:
    return json.loads((folder / "manifest.json").read_text(encoding="utf-8"))


def _set_manifest(folder: Path, doc: dict) -> None:
    (folder / "manifest.json").write_text(json.dumps(doc), encoding="utf-8")


def test_hostile_replay_manifest_cannot_point_state_path_at_a_file(run_cli, tmp_path):
    folder = replay_copy(tmp_path)
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me\n", encoding="utf-8")
    doc = _manifest(folder)
    doc["providers"]["aliyun"]["options"]["state_path"] = str(victim)
    _set_manifest(folder, doc)
    result = run_cli("refresh", "--from-raw", str(folder))
    assert result.exit_code == 2, result.output
    assert "option 'state_path'" in result.stderr and "not one a replay accepts" in result.stderr
    assert "Hint:" in result.stderr and "Traceback" not in result.output
    assert victim.read_text(encoding="utf-8") == "keep me\n"


@pytest.mark.parametrize(
    "provider, field, value, message",
    [
        (
            "autodl",
            "options",
            {"charge_types": "payg"},
            "option 'charge_types' has a value of the wrong kind",
        ),
        ("aliyun", "options", {"cdn_version": "../../etc"}, "option 'cdn_version' has a value"),
        ("aliyun", "options", {"spot": "yes"}, "option 'spot' has a value of the wrong kind"),
        ("tencent", "options", {"anything": 1}, "option 'anything' is not one a replay accepts"),
        ("tencent", "regions", ["ap-beijing", {"x": 1}], "regions must be a list of region names"),
        ("tencent", "mode", "root", "mode 'root' is neither public nor account"),
    ],
)
def test_hostile_replay_manifest_takes_only_documented_options(tmp_path, provider, field, value, message):
    folder = replay_copy(tmp_path)
    doc = _manifest(folder)
    doc["providers"][provider][field] = value
    _set_manifest(folder, doc)
    with pytest.raises(UsageError) as caught:
        read_manifest(folder)
    assert message in caught.value.message


def test_hostile_replay_folder_without_a_manifest_is_a_usage_error(run_cli, tmp_path):
    folder = replay_copy(tmp_path)
    (folder / "manifest.json").unlink()
    result = run_cli("refresh", "--from-raw", str(folder))
    assert result.exit_code == 2, result.output
    assert "has no manifest.json" in result.stderr and "--save-raw" in result.stderr
    (folder / "manifest.json").write_text("{not json", encoding="utf-8")
    broken = run_cli("refresh", "--from-raw", str(folder))
    assert broken.exit_code == 2 and "is not valid JSON" in broken.stderr


def _sidecar_linked_out(body: Path, tmp_path: Path) -> None:
    sidecar = body.with_suffix(".json")
    target = tmp_path / "elsewhere.json"
    target.write_bytes(sidecar.read_bytes())
    sidecar.unlink()
    sidecar.symlink_to(target)


HOSTILE_FILES = [
    (_link_to_local_file, "a symbolic link"),
    (_link_to_dev_zero, "a symbolic link"),
    (_fifo, "not a regular file"),
    (_oversized, f"more than {MAX_RESPONSE_BYTES}"),
    (_sidecar_linked_out, "a symbolic link"),
]


@pytest.mark.parametrize(
    "plant, message", HOSTILE_FILES, ids=[p.__name__.strip("_") for p, _ in HOSTILE_FILES]
)
def test_hostile_replay_files_are_refused_not_read(engine, tmp_path, plant, message):
    folder = replay_copy(tmp_path)
    body = recordings(folder, "tencent", "/cgi/api")[-1]
    plant(body, tmp_path)
    summary = refresh(engine, tmp_path, from_raw=folder, providers=["tencent"])
    tencent = outcome(summary, "tencent")
    assert tencent.status in ("failed", "partial")
    assert "refused" in (tencent.error or "") and message in (tencent.error or ""), tencent.error
    with engine.connect() as conn:
        stored = " ".join(str(v) for row in conn.execute(select(scrape_runs)) for v in row)
    assert LOCAL_SECRET not in stored and LOCAL_SECRET not in (tencent.error or "")


def test_hostile_replay_provider_folder_linked_out_is_refused(engine, tmp_path):
    folder = replay_copy(tmp_path)
    moved = tmp_path / "elsewhere"
    (folder / "tencent").rename(moved)
    (folder / "tencent").symlink_to(moved)
    summary = refresh(engine, tmp_path, from_raw=folder, providers=["tencent"])
    tencent = outcome(summary, "tencent")
    assert tencent.status == "failed" and "symbolic link: refused" in tencent.error
