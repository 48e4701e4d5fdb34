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


def serve_compshare(mock: Any = responses) -> None:
    """Register CompShare's fixture answers on ``mock`` (``responses`` itself by default), each matched
    by its Action and the parameters that pick it, whatever the keys and the signature."""
    from responses import matchers

    from scrapers.providers.compshare import API_URL

    folder = FIXTURES / "compshare"

    def add(path: Path, **query: str) -> None:
        mock.get(
            API_URL,
            body=path.read_bytes(),
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
        add(path, Action="GetCompShareInstancePrice", Zone=zone, GpuType=gpu_type, Gpu=count)
