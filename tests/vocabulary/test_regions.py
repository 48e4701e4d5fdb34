"""Region scope: mainland China or outside it (Hong Kong, abroad), for every region we know of."""

from __future__ import annotations

import csv

import pytest

from planner.ingest.snapshot import snapshot_path
from planner.regions import region_scope
from scrapers.providers.tencent import DEFAULT_REGIONS


@pytest.mark.parametrize(
    ("provider", "region", "scope"),
    [
        ("aliyun", "cn-beijing", "mainland"),
        ("aliyun", "cn-wuhan-lr", "mainland"),
        ("aliyun", "cn-hongkong", "overseas"),
        ("aliyun", "ap-southeast-1", "overseas"),
        ("aliyun", "us-west-1", "overseas"),
        ("volcengine", "cn-beijing2", "mainland"),
        ("volcengine", "cn-hongkong", "overseas"),
        ("volcengine", "ap-southeast-3", "overseas"),
        ("tencent", "ap-guangzhou", "mainland"),
        ("tencent", "ap-shanghai-fsi", "mainland"),
        ("tencent", "ap-shenzhen-fsi", "mainland"),
        ("tencent", "ap-hongkong", "overseas"),
        ("tencent", "ap-singapore", "overseas"),
        ("tencent", "na-ashburn", "overseas"),
        ("tencent", "eu-frankfurt", "overseas"),
        ("autodl", "west-B", "mainland"),
        ("autodl", "beijing-A", "mainland"),
        ("tencent", "unspecified", "mainland"),
        ("aliyun", "cn-shanghai/cn-shenzhen", "mainland"),
        ("aliyun", "cn-shenzhen/cn-hongkong", "overseas"),
        ("aliyun", " CN-HONGKONG ", "overseas"),
    ],
)
def test_region_scope(provider, region, scope):
    assert region_scope(provider, region) == scope


def test_every_snapshot_region_has_a_scope_and_hong_kong_is_not_mainland():
    with snapshot_path().open(encoding="utf-8", newline="") as fh:
        pairs = {(r["provider"], r["region"]) for r in csv.DictReader(fh)}
    scopes = {pair: region_scope(*pair) for pair in pairs}
    assert {p for p, s in scopes.items() if s == "overseas"} == {("aliyun", "cn-hongkong")}
    assert all(region_scope("tencent", r) == "mainland" for r in DEFAULT_REGIONS)
