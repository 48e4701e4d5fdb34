"""Provider names as people spell them: the check behind ``--provider`` and imported files.

The names, aliases and marketplace flags are the lines of ``vocab.PROVIDER_TABLE`` (the scrapers'
registry without the scrapers), so reading commands check a name without importing ``requests``.
"""

from __future__ import annotations

import difflib

from planner.errors import UnknownNameError
from vocab import MARKET_MACHINE_GPUS, MARKETPLACES, PROVIDER_NAMES, PROVIDER_TABLE

PROVIDERS: tuple[str, ...] = PROVIDER_NAMES
__all__ = ["MARKETPLACES", "MARKET_MACHINE_GPUS", "PROVIDERS", "canonical_provider"]

_ALIASES: dict[str, str] = {alias: p.name for p in PROVIDER_TABLE for alias in p.aliases}


def canonical_provider(name: str) -> str:
    """``Aliyun`` -> ``aliyun``; an unknown name raises UnknownNameError with near names."""
    key = name.strip().lower().replace(" ", "").replace("_", "")
    if key in PROVIDERS:
        return key
    if key in _ALIASES:
        return _ALIASES[key]
    raise UnknownNameError(
        "provider", name, difflib.get_close_matches(key, PROVIDERS, n=2, cutoff=0.5) or PROVIDERS
    )
