"""The recorded raw replay (tests/fixtures/raw) and a refresh run over it, with no network."""

from __future__ import annotations

import copy
import datetime as dt
import json
import shutil
from pathlib import Path

from planner.config import Config, load_config
from planner.ingest.refresh import RefreshSummary, run_refresh

# Off in the packaged defaults until a user turns them on; the tests' config turns them on.
OFF_BY_DEFAULT = ("ppio", "compshare")

RAW = Path(__file__).resolve().parents[1] / "fixtures" / "raw"
FIXTURES = RAW.parent

# What the replay stores (see tests/fixtures/raw/README.md for the payloads behind each figure).
EXPECTED_STORED = {"aliyun": 288, "tencent": 10, "volcengine": 7, "autodl": 9, "ppio": 76, "compshare": 20}

# What a refresh run with the packaged defaults (the CLI, no test config) stores.
EXPECTED_STORED_BY_DEFAULT = {p: n for p, n in EXPECTED_STORED.items() if p not in OFF_BY_DEFAULT}

# A replay stores its prices as of when they were recorded (manifest.json's recorded_at), not today.
REPLAY_DAYS = {
    name: dt.date.fromisoformat(entry["recorded_at"][:10])
    for name, entry in json.loads((RAW / "manifest.json").read_text(encoding="utf-8"))["providers"].items()
}


def make_config(tmp_path: Path, refresh: dict | None = None, providers: dict | None = None) -> Config:
    """Packaged defaults, with no retries, no backoff and no politeness pause, and every provider
    enabled, the marketplaces that are off by default included (tests only)."""
    data = copy.deepcopy(load_config(env={}, cwd=tmp_path).data)
    data["http"].update(retries=0, backoff_s=0.0)
    for section in data["providers"].values():
        section.update(min_interval_s=0.0, enabled=True)
    data["refresh"].update(refresh or {})
    for name, values in (providers or {}).items():
        data["providers"][name].update(values)
    return Config(data=data)


def refresh(engine, tmp_path: Path, config: Config | None = None, **kw) -> RefreshSummary:
    kw.setdefault("env", {})
    return run_refresh(engine, config or make_config(tmp_path), **kw)


def outcome(summary: RefreshSummary, provider: str):
    return next(o for o in summary.outcomes if o.provider == provider)


def replay_copy(tmp_path: Path) -> Path:
    """A private copy of the recorded replay, safe to break."""
    target = tmp_path / "raw"
    shutil.copytree(RAW, target, ignore=shutil.ignore_patterns("*.py", "*.md"))
    return target


def recordings(folder: Path, provider: str, url_part: str, method: str | None = None) -> list[Path]:
    """The .body files of ``provider`` whose recorded URL contains ``url_part`` (in recorded order)."""
    found = []
    for sidecar in sorted((folder / provider).glob("*.json")):
        meta = json.loads(sidecar.read_text(encoding="utf-8"))
        if url_part in meta["url"] and method in (None, meta["method"]):
            found.append(sidecar.with_suffix(".body"))
    return found


def set_status(body: Path, status: int) -> None:
    sidecar = body.with_suffix(".json")
    meta = json.loads(sidecar.read_text(encoding="utf-8"))
    meta["status"] = status
    sidecar.write_text(json.dumps(meta), encoding="utf-8")


def break_autodl_expired_token(folder: Path) -> None:
    first_page = recordings(folder, "autodl", "machine/search")[0]
    first_page.write_bytes((FIXTURES / "autodl" / "authorize_failed.json").read_bytes())
