"""Shared helpers for scraper tests: fixture files, a fake clock, a client that never really sleeps."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import responses

from scrapers.http import HttpClient, HttpPolicy

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


def fixture_json(provider: str, name: str) -> Any:
    return json.loads((FIXTURES / provider / name).read_text(encoding="utf-8"))


def fixture_bytes(provider: str, name: str) -> bytes:
    return (FIXTURES / provider / name).read_bytes()


class FakeClock:
    """A monotonic clock that only moves when the client sleeps; records every sleep."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def rsps():
    with responses.RequestsMock(assert_all_requests_are_fired=False) as mock:
        yield mock


@pytest.fixture
def make_client(clock: FakeClock):
    def make(provider: str = "tencent", **kw: Any) -> HttpClient:
        kw.setdefault("policy", HttpPolicy(min_interval_s=0.0))
        return HttpClient(provider, version="9.9.9", sleep=clock.sleep, clock=clock, **kw)

    return make


# CompShare: which fixture answers which call (region or zone, GPU type and count); see its README.
COMPSHARE_REGION_CALLS = ("DescribeCompShareSupportZone", "DescribeCompShareGpuInventory")


def _price_answer(body: dict[str, Any], charge: str | None) -> bytes:
    """A price file answered the way the docs read: only the asked mode's row; no ChargeType: Month's."""
    key = "PriceDetail" if "PriceDetail" in body else "PriceDetails"
    wanted = charge or "Month"
    rows = [r for r in body[key] if isinstance(r, dict) and r.get("ChargeType") == wanted]
    return json.dumps({**body, key: rows}, ensure_ascii=False, indent=1).encode()


def serve_compshare(mock: Any = responses, reading: str = "docs") -> None:
    """Register CompShare's fixture answers on ``mock`` (``responses`` itself by default), each matched
    by its Action and the parameters that pick it, whatever the keys and the signature.

    A price file holds one row per charge type. ``reading="docs"`` answers a price call as the docs say
    (``GetCompShareInstancePrice``: the ``ChargeType`` asked, the monthly row when none is); ``"cli"``
    answers every call with every row, as the official CLI's price command reads it.
    """
    from responses import matchers

    from scrapers.providers.compshare import API_URL, PRICE_CHARGE_TYPES

    folder = FIXTURES / "compshare"

    def add(path: Path, body: bytes | None = None, **query: str) -> None:
        mock.get(
            API_URL,
            body=path.read_bytes() if body is None else body,
            content_type="application/json",
            match=[matchers.query_param_matcher(query, strict_match=False)],
        )

    for region in ("cn-wlcb", "cn-sh2"):
        for action in COMPSHARE_REGION_CALLS:
            add(folder / f"{action}_{region}.constructed.json", Action=action, Region=region)
    for path in sorted(folder.glob("DescribeAvailableCompShareInstanceTypes_*.constructed.json")):
        zone = path.name.split("_")[1].split(".")[0]
        add(path, Action="DescribeAvailableCompShareInstanceTypes", Zone=zone)
    for path in sorted(folder.glob("GetCompShareInstancePrice_*.constructed.json")):
        zone, rest = path.name.removeprefix("GetCompShareInstancePrice_").split("_", 1)
        gpu_type, count = rest.removesuffix(".constructed.json").rsplit("_x", 1)
        picks = {"Action": "GetCompShareInstancePrice", "Zone": zone, "GpuType": gpu_type, "Gpu": count}
        if reading == "cli":
            add(path, **picks)
            continue
        data = json.loads(path.read_bytes())
        for charge in PRICE_CHARGE_TYPES:
            add(path, _price_answer(data, charge), ChargeType=charge, **picks)
        add(path, _price_answer(data, None), **picks)  # no ChargeType: the monthly price only
