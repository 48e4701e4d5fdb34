"""Provider names: the one list the planner checks --provider and imported files against.

``scrapers.registry`` holds the scraper for each; a test keeps the two in step. The list lives here so
that reading commands can check a name without importing the scrapers (and ``requests``).
"""

from __future__ import annotations

import difflib

from planner.errors import UnknownNameError

PROVIDERS: tuple[str, ...] = ("aliyun", "tencent", "volcengine", "autodl", "ppio", "compshare")
# Marketplaces sell GPUs of shared machines one by one: their "instance" is one GPU (normalize.py), and
# a job of N GPUs can sit on one machine while N fits it. AutoDL's market search lists machines with
# gpu_number 8 (shared/reference/samples/autodl_machine_search.json).
MARKETPLACES: frozenset[str] = frozenset({"autodl"})
MARKET_MACHINE_GPUS = 8

_ALIASES = {
    "alibaba": "aliyun",
    "alibabacloud": "aliyun",
    "alicloud": "aliyun",
    "阿里云": "aliyun",
    "tencentcloud": "tencent",
    "qcloud": "tencent",
    "腾讯云": "tencent",
    "volc": "volcengine",
    "bytedance": "volcengine",
    "火山引擎": "volcengine",
    "派欧云": "ppio",
    "ppinfra": "ppio",
    "优云智算": "compshare",
    "ucompshare": "compshare",
}


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
