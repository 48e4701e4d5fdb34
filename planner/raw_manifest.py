"""The manifest of a ``--save-raw`` folder: per provider, what a ``--from-raw`` replay needs.

``--save-raw DIR`` writes every response to ``DIR/<provider>/`` (secrets removed) plus
``DIR/manifest.json`` (mode, regions and options per provider), so that ``--from-raw DIR`` asks the
recorded questions again.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from db import store
from planner import __version__
from planner.refresh_runs import Job

MANIFEST = "manifest.json"


def read_manifest(folder: Path) -> dict[str, Any]:
    try:
        data = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    providers = data.get("providers") if isinstance(data, dict) else None
    return providers if isinstance(providers, dict) else {}


def write_manifest(folder: Path, jobs: Sequence[Job]) -> None:
    """Record per provider what a replay needs to ask the same questions: mode, regions, options."""
    folder.mkdir(parents=True, exist_ok=True)
    providers = read_manifest(folder)
    for job in jobs:
        options = {k: list(v) if isinstance(v, tuple) else v for k, v in job.settings.options.items()}
        options.pop("state_path", None)
        providers[job.name] = {
            "mode": job.mode.split("/")[0],
            "regions": list(job.settings.regions),
            "options": options,
            "recorded_at": store.utcnow().isoformat() + "Z",
        }
    doc = {"planner_version": __version__, "providers": dict(sorted(providers.items()))}
    (folder / MANIFEST).write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def recorded_at(folder: Path, entry: Any) -> dt.datetime | None:
    """When a provider's replayed responses were recorded (naive UTC): the manifest's ``recorded_at``,
    else the earliest response's; None when the folder says nothing. ValueError for a time in the
    future: replayed prices stored as of a day to come would stand in for that day's real refresh."""
    from planner.importer import parse_observed_at
    from planner.normalize import PriceRejected

    stated = entry.get("recorded_at") if isinstance(entry, dict) else None
    found: list[str] = [stated] if isinstance(stated, str) else []
    if not found:
        for sidecar in sorted(folder.glob("*.json"))[:1000]:
            try:
                meta = json.loads(sidecar.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue
            if isinstance(meta, dict) and isinstance(meta.get("recorded_at"), str):
                found.append(meta["recorded_at"])
    moments = []
    for text in found:
        try:
            moments.append(parse_observed_at(text[:40]))
        except PriceRejected as err:
            raise ValueError(f"the recording in {folder} cannot be replayed: {err}") from None
    return min(moments) if moments else None
