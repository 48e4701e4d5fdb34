"""The manifest of a ``--save-raw`` folder: per provider, what a ``--from-raw`` replay needs.

``--save-raw DIR`` writes every response to ``DIR/<provider>/`` (secrets removed) plus
``DIR/manifest.json`` (mode, regions and options per provider), so that ``--from-raw DIR`` asks the
recorded questions again.

A folder to replay is untrusted input: ``read_manifest`` accepts only each provider's documented
options (its scraper's ``replay_options``, with their types), a mode and a list of region names, and
refuses anything else as a usage error, so a manifest cannot point Aliyun's ``state_path`` (the file
it rewrites) anywhere. A folder without a manifest is not a recording: a usage error too.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from db import store
from planner import __version__
from planner.errors import UsageError
from planner.ingest.runs import ScrapeJob
from planner.money import PriceRejected
from reports.files import written_whole
from scrapers.base import ScrapeError
from scrapers.recording import MAX_SIDECAR_BYTES, read_regular

MANIFEST = "manifest.json"
MAX_MANIFEST_BYTES = 2**20
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}")
_VERSION = re.compile(r"\d+(?:\.\d+){1,3}")
# A whole command for a person, not a flag the caller is said to have given: it is the one way to write
# such a folder from the command line (a program passes ``save_raw`` to ``planner.ingest.refresh.refresh``).
_HINT = "replay a folder written by `planner refresh --save-raw DIR`, unedited"


def read_manifest(folder: Path) -> dict[str, Any]:
    """The checked per-provider entries of ``folder``'s manifest; a UsageError if it is missing or
    holds anything a replay does not take."""
    where = folder / MANIFEST
    if not where.exists() and not where.is_symlink():
        raise UsageError(f"{folder} has no {MANIFEST}: it is not a folder of saved raw answers", hint=_HINT)
    try:
        data = json.loads(read_regular(where, MAX_MANIFEST_BYTES).decode("utf-8"))
    except ScrapeError as err:
        raise UsageError(f"{where}: {err}", hint=_HINT) from None
    except (ValueError, RecursionError):
        raise UsageError(f"{where} is not valid JSON", hint=_HINT) from None
    providers = data.get("providers") if isinstance(data, dict) else None
    if not isinstance(providers, dict):
        raise UsageError(f'{where} has no "providers" table', hint=_HINT)
    from scrapers.registry import PROVIDERS  # a name we do not know is never replayed: skipped

    return {name: _checked(where, name, entry) for name, entry in providers.items() if name in PROVIDERS}


def _checked(where: Path, name: str, entry: Any) -> dict[str, Any]:
    def refuse(what: str) -> UsageError:
        return UsageError(
            f"{where}: {name}: {what}; a replay takes only what saving raw answers writes", hint=_HINT
        )

    if not isinstance(entry, dict):
        raise refuse("the entry is not a table")
    mode = entry.get("mode", "public")
    if mode not in ("public", "account"):
        raise refuse(f"mode {str(mode)[:20]!r} is neither public nor account")
    regions = entry.get("regions", [])
    if not _names(regions):
        raise refuse("regions must be a list of region names")
    options = entry.get("options", {})
    if not isinstance(options, dict):
        raise refuse("options is not a table")
    allowed = replay_options(name)
    for key, value in options.items():
        kind = allowed.get(key)
        if kind is None:
            known = ", ".join(allowed) or "none"
            raise refuse(f"option {str(key)[:40]!r} is not one a replay accepts (accepted: {known})")
        ok = {
            "bool": isinstance(value, bool),
            "names": _names(value),
            "version": isinstance(value, str) and bool(_VERSION.fullmatch(value)),
        }[kind]
        if not ok:
            raise refuse(f"option {key!r} has a value of the wrong kind")
    checked: dict[str, Any] = {"mode": mode, "regions": list(regions), "options": dict(options)}
    recorded = entry.get("recorded_at")
    if recorded is not None:  # when the responses were recorded: read by recorded_at(), which checks it
        if not isinstance(recorded, str) or len(recorded) > 40:
            raise refuse("recorded_at is not a time")
        checked["recorded_at"] = recorded
    return checked


def replay_options(name: str) -> dict[str, str]:
    """The options a replay of ``name`` takes from a manifest, and the kind each must be ("names": a list
    of short names); from the scraper's ``replay_options``. Others (Aliyun's ``state_path``, a file it
    writes) are never taken from one."""
    from scrapers.registry import PROVIDERS

    return dict(getattr(PROVIDERS[name], "replay_options", {}))


def _names(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) and _NAME.fullmatch(v) for v in value)


def write_manifest(folder: Path, jobs: Sequence[ScrapeJob]) -> None:
    """Record per provider what a replay needs to ask the same questions: mode, regions, options."""
    folder.mkdir(parents=True, exist_ok=True)
    try:
        providers = read_manifest(folder)
    except UsageError:
        providers = {}  # nothing (usable) recorded here before: this refresh's entries only
    for job in jobs:
        allowed = replay_options(job.name)
        options = {
            k: list(v) if isinstance(v, tuple) else v for k, v in job.settings.options.items() if k in allowed
        }
        providers[job.name] = {
            "mode": job.mode.split("/")[0],
            "regions": list(job.settings.regions),
            "options": options,
            "recorded_at": store.utcnow().isoformat() + "Z",
        }
    doc = {"planner_version": __version__, "providers": dict(sorted(providers.items()))}
    # Written beside and renamed over: a link planted as manifest.json is replaced, not written through.
    with written_whole(folder / MANIFEST) as tmp, open(tmp, "w", encoding="utf-8") as fh:
        fh.write(json.dumps(doc, indent=1, ensure_ascii=False) + "\n")


def recorded_at(folder: Path, entry: Any) -> dt.datetime | None:
    """When a provider's replayed responses were recorded (naive UTC): the manifest's ``recorded_at``,
    else the earliest response's; None when the folder says nothing. ValueError for a time in the
    future: replayed prices stored as of a day to come would stand in for that day's real refresh."""
    from planner.ingest.importer import parse_observed_at

    stated = entry.get("recorded_at") if isinstance(entry, dict) else None
    found: list[str] = [stated] if isinstance(stated, str) else []
    if not found and not folder.is_symlink():
        for sidecar in sorted(folder.glob("*.json"))[:1000]:
            try:  # regular files inside the folder only, of a sane size (the folder is untrusted)
                meta = json.loads(read_regular(sidecar, MAX_SIDECAR_BYTES).decode("utf-8"))
            except (ScrapeError, ValueError):
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
