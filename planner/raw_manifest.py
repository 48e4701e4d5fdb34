"""The manifest of a ``--save-raw`` folder: per provider, what a ``--from-raw`` replay needs.

``--save-raw DIR`` writes every response to ``DIR/<provider>/`` (secrets removed) plus
``DIR/manifest.json`` (mode, regions and options per provider), so that ``--from-raw DIR`` asks the
recorded questions again.
"""

from __future__ import annotations

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
