"""The registry and collect(): statuses, credentials from the environment, record-then-replay end to end."""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal

from conftest import fixture_json
from responses import matchers

from scrapers.base import RawOffer, ScrapeError
from scrapers.providers.tencent import API_URL
from scrapers.registry import PROVIDERS, Issue, ProviderSettings, collect, make_client, read_credentials

OFFER = RawOffer(
    provider="fake",
    region="r1",
    instance_type="t",
    gpu_name="NVIDIA T4",
    gpu_count=1.0,
    billing="on_demand",
    price=Decimal("1"),
    unit="hour",
)


class Fake:
    name = "fake"

    def __init__(self, items, error=None):
        self.items, self.error = items, error

    def scrape(self, client, settings) -> Iterator[RawOffer | Issue]:
        yield from self.items
        if self.error:
            raise self.error


def test_registry_lists_providers_with_the_protocol():
    assert {"aliyun", "tencent"} <= set(PROVIDERS)
    for name, cls in PROVIDERS.items():
        assert cls.name == name
        assert cls.credential_env and cls.http_policy.min_interval_s > 0
        assert cls().mode({}).mode == "public"


def test_read_credentials_takes_only_own_non_empty_vars():
    env = {"TENCENTCLOUD_SECRET_ID": "id", "TENCENTCLOUD_SECRET_KEY": "", "OTHER": "x"}
    assert read_credentials(PROVIDERS["tencent"], env) == {"TENCENTCLOUD_SECRET_ID": "id"}


def test_collect_statuses():
    settings = ProviderSettings()
    assert collect(Fake([OFFER]), None, settings).status == "ok"
    partial = collect(Fake([OFFER, Issue("region_failed", "r2 broke", "r2")]), None, settings)
    assert (partial.status, partial.error, len(partial.offers)) == ("partial", "r2 broke", 1)
    failed = collect(Fake([Issue("region_failed", "r1 broke", "r1")]), None, settings)
    assert failed.status == "failed"
    skipped = collect(Fake([OFFER, Issue("skipped", "unknown GPU")]), None, settings)
    assert skipped.status == "ok" and len(skipped.skipped) == 1


def test_collect_drops_offers_of_a_failed_run_and_scrubs_secrets():
    settings = ProviderSettings(credentials={"K": "hunter2hunter2"})
    result = collect(Fake([OFFER], ScrapeError("bad answer hunter2hunter2")), None, settings)
    assert result.status == "failed" and result.offers == []
    assert result.error == "bad answer ***"
    crash = collect(Fake([OFFER], KeyError("hunter2hunter2")), None, settings)
    assert crash.status == "failed" and "KeyError" in crash.error and "hunter2" not in crash.error


def test_record_then_replay_gives_the_same_offers(rsps, tmp_path, clock):
    cls = PROVIDERS["tencent"]
    env = {"TENCENTCLOUD_SECRET_ID": "AKIDrecord", "TENCENTCLOUD_SECRET_KEY": "record-secret-0001"}
    settings = ProviderSettings(
        regions=("ap-beijing", "ap-guangzhou"), credentials=read_credentials(cls, env)
    )
    for region, name in (("ap-beijing", "ap-beijing"), ("ap-guangzhou", "ap-guangzhou")):
        rsps.post(
            API_URL,
            json=fixture_json("tencent", f"DescribeZoneInstanceConfigInfos_{name}.constructed.json"),
            match=[matchers.header_matcher({"X-TC-Region": region})],
        )
    live = make_client(cls, settings, version="1.0", save_raw_dir=tmp_path, sleep=clock.sleep, clock=clock)
    recorded = collect(cls(), live, settings)
    assert recorded.status == "ok" and len(recorded.offers) == 13
    raw = "".join(p.read_text(errors="replace") for p in (tmp_path / "tencent").iterdir())
    assert "record-secret-0001" not in raw and "AKIDrecord" not in raw and "TC3-HMAC" not in raw
    rsps.reset()
    replay = make_client(cls, settings, version="1.0", from_raw_dir=tmp_path)
    replayed = collect(cls(), replay, settings)
    assert replayed.offers == recorded.offers and len(rsps.calls) == 0


def test_each_table_line_names_a_scraper_of_that_name():
    from scrapers.registry import PROVIDERS
    from vocab import PROVIDER_TABLE

    assert [cls.name for cls in PROVIDERS.values()] == [p.name for p in PROVIDER_TABLE]


def test_a_provider_state_comes_through_its_hook(tmp_path):
    from scrapers.registry import PROVIDERS, state_options

    assert state_options(PROVIDERS["aliyun"], tmp_path) == {"state_path": str(tmp_path / "aliyun.json")}
    assert state_options(PROVIDERS["tencent"], tmp_path) == {}


def test_aliases_belong_to_their_provider():
    from planner.providers import canonical_provider

    assert canonical_provider("阿里云") == "aliyun" and canonical_provider("Tencent Cloud") == "tencent"
    assert canonical_provider("ppinfra") == "ppio" and canonical_provider("火山引擎") == "volcengine"
