"""Text from outside is data in every message: a region or instance named like markup (a link, an HTML
tag, a Feishu @everyone, a WeCom mention, a bare URL) reaches WeCom, DingTalk and Feishu, and the nightly
digest, as plain characters, never as a clickable link or a mention."""

from __future__ import annotations

import re
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import pandas as pd
import pytest

from planner.alerts.channels import deliver
from planner.alerts.channels.base import Channel, SendPolicy
from planner.alerts.digest import digest
from planner.alerts.message import Firing, literal, render
from planner.config import load_config
from tests.helpers.alerts import DING_SECRET, FEISHU_SECRET, RobotServer

HOSTILE_REGION = "[续费](http://evil.example/pay)<at id=all></at>"
HOSTILE_TYPE = '<@all> ![x](https://evil.example/i.png) <font color="red">**urgent**</font> &lt;at id=all&gt;'
FAST = SendPolicy(attempts=1, backoff_s=0.01, connect_timeout_s=2, read_timeout_s=5)
# What any of the three platforms would read as a link, an image, a tag, a mention or an autolink.
LIVE = (
    re.compile(r"\]\s*\("),  # [text](url), ![alt](url)
    re.compile(r"<\s*/?\s*[A-Za-z@!]"),  # <at id=all>, <@user>, <font>, <a href>, <http://...>
    re.compile(r"https?://", re.IGNORECASE),  # a bare URL becomes a link
    re.compile(r"&(lt|gt|amp|#\d+);"),  # an entity a renderer decodes into a tag
    re.compile(r"\*\*urgent"),  # emphasis borrowed from a name
)


def _live(text: str) -> list[str]:
    return [p.pattern for p in LIVE if p.search(text)]


def _hostile_firing() -> Firing:
    offer: dict[str, Any] = {
        "provider": "autodl",
        "region": HOSTILE_REGION,
        "instance_type": HOSTILE_TYPE,
        "billing": "on_demand",
        "cny_per_gpu_hour": 1.5,
        "stock": "available",
        "reason": f"new at autodl: RTX4090-24GB as {HOSTILE_TYPE}",
    }
    return Firing("cheap-4090", "RTX 4090 under 2 CNY/GPU-h", (offer,))


@pytest.fixture
def robots() -> Iterator[RobotServer]:
    server = RobotServer()
    yield server
    server.close()


def _posted_text(request: dict[str, Any]) -> str:
    body = request["body"]
    if request["kind"] == "wecom":
        return body["markdown"]["content"]
    if request["kind"] == "dingtalk":
        return body["markdown"]["title"] + "\n" + body["markdown"]["text"]
    card = body["card"]
    return card["header"]["title"]["content"] + "\n" + "\n".join(e["content"] for e in card["elements"])


@pytest.mark.parametrize("kind", ["wecom", "dingtalk", "feishu"])
def test_hostile_names_reach_each_robot_as_text(robots, kind):
    env = {
        "PLANNER_WEBHOOK_CH": {"wecom": robots.wecom_url, "dingtalk": robots.dingtalk_url}.get(
            kind, robots.feishu_url
        ),
        "PLANNER_WEBHOOK_CH_SECRET": {"dingtalk": DING_SECRET, "feishu": FEISHU_SECRET}.get(kind, ""),
    }
    title, text = render([_hostile_firing()], 4000)
    delivery = deliver(Channel("CH", kind), title, text, config=load_config(), env=env, policy=FAST)
    assert delivery.ok, delivery.error
    posted = _posted_text(robots.requests[-1])
    assert _live(posted) == [], posted
    # still readable: the words are there, only the markup characters are look-alikes
    assert "续费" in posted and "evil.example/pay" in posted and "at id=all" in posted


def test_the_digest_names_hostile_providers_regions_and_instances_as_text():
    cheapest = pd.DataFrame(
        [
            {
                "gpu_model": "RTX4090-24GB",
                "cny_per_gpu_hour": 1.5,
                "provider": "autodl",
                "instance_type": HOSTILE_TYPE,
                "region": HOSTILE_REGION,
                "billing": "on_demand",
                "cny_per_gpu_hour_basis": "on_demand, per hour",
                "on_demand_cny_per_gpu_hour": 1.5,
            }
        ]
    )
    changes = pd.DataFrame(
        [
            {
                "gpu_model": "RTX4090-24GB",
                "provider": "autodl",
                "instance_type": HOSTILE_TYPE,
                "region": HOSTILE_REGION,
                "change_pct": -40.0,
                "old_cny_per_gpu_hour": 2.5,
                "new_cny_per_gpu_hour": 1.5,
            }
        ]
    )
    health = pd.DataFrame([{"provider": "autodl", "status": "failed"}])
    report = SimpleNamespace(
        tables={"cheapest": cheapest, "changes": changes, "health": health},
        day=pd.Timestamp("2026-12-01").date(),
        scope_notes=(f"Cheaper outside the mainland: {HOSTILE_REGION}",),
    )
    _title, markdown = digest(report)
    assert _live(markdown) == [], markdown
    assert markdown.count("续费") == 3  # cheapest, change and the scope note all still name it


@pytest.mark.parametrize(
    "name",
    [
        "[a](javascript:alert(1))",
        '<at user_id="ou_x"></at>',
        "<@wangwei>",
        "![](http://x/y.png)",
        "<http://x.example>",
        "https://x.example/login",
        "&#60;at id=all&#62;",
        "a\nb ### heading",
        "`code` \\[x\\](http://y)",
    ],
)
def test_literal_leaves_no_markup_whatever_the_name(name):
    out = literal(name)
    assert _live(out) == [] and "\n" not in out and "`" not in out and "\\" not in out


def test_the_digest_of_a_real_report_over_hostile_imported_names_is_text(engine, tmp_path):
    import datetime as dt

    from planner.answers.report import cheapest_for
    from planner.ingest.importer import import_csv
    from reports.build import build_report
    from tests.conftest import price_row, write_csv

    today = dt.datetime.now(dt.UTC).date()
    seen = [(today - dt.timedelta(days=d)).isoformat() for d in (2, 1)]
    rows = [  # the same hostile offer on two days, cheaper on the second: cheapest and a change
        price_row(
            provider="aliyun",
            region=HOSTILE_REGION.replace(",", " "),
            instance_type="ecs.gn6i <at id=all></at>",
            gpu_model="T4-16GB",
            price=price,
            observed_at=day,
        )
        for day, price in zip(seen, ("11.63", "7.89"), strict=True)
    ]
    fx = load_config(env={}).section("fx")
    import_csv(engine, write_csv(tmp_path / "hostile.csv", rows), fx)
    report = build_report(engine, today, cheapest=cheapest_for((), (), fx, "all"))
    _title, markdown = digest(report)
    assert markdown.count("续费") == 2 and "ecs.gn6i" in markdown, markdown  # cheapest and change
    assert _live(markdown) == [], markdown
