"""Tencent Cloud CVM GPU prices from ``DescribeZoneInstanceConfigInfos`` (one call returns every type).

- Account mode (``TENCENTCLOUD_SECRET_ID`` and ``TENCENTCLOUD_SECRET_KEY`` set): the official API at
  ``https://cvm.tencentcloudapi.com/``, signed TC3-HMAC-SHA256, one call per region.
- Public mode: the console's workbench CGI (unofficial, fuzzbuster/ec2instances.info): regions and zones
  from ``cgi/area/queryCvmRegion``, then one call per zone.

Errors arrive with HTTP 200 inside ``Response.Error``: a failure of that region (``RequestLimitExceeded``
is retried; ``AuthFailure*`` fails the whole run). Options (``settings.options``): none yet.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, ClassVar

from scrapers.base import RawOffer, ScrapeError
from scrapers.http import HttpClient, HttpPolicy, HttpResponse
from scrapers.providers.tencent_parse import parse_quota_set
from scrapers.signing.tc3 import Tc3Signer
from scrapers.types import Issue, ProviderMode, ProviderSettings

API_URL = "https://cvm.tencentcloudapi.com/"
WORKBENCH = "https://workbench.cloud.tencent.com/cgi"
CHARGE_TYPES = ["PREPAID", "POSTPAID_BY_HOUR", "SPOTPAID"]
# Mainland regions where GPU stock mostly sits (providers.md §1.1); config ``regions`` overrides.
DEFAULT_REGIONS = ("ap-beijing", "ap-shanghai", "ap-guangzhou", "ap-nanjing", "ap-chengdu", "ap-chongqing")
ENV_ID, ENV_KEY = "TENCENTCLOUD_SECRET_ID", "TENCENTCLOUD_SECRET_KEY"


def _throttled(resp: HttpResponse) -> bool:
    """Tencent throttles with HTTP 200 and ``Error.Code = RequestLimitExceeded`` (providers.md §1.6)."""
    return b"RequestLimitExceeded" in resp.content[:2000]


class TencentScraper:
    """Tencent Cloud CVM: on-demand (hour tiers), monthly/yearly subscription and spot, with sell status."""

    name: ClassVar[str] = "tencent"
    credential_env: ClassVar[tuple[str, ...]] = (ENV_ID, ENV_KEY)
    credential_help: ClassVar[str] = (
        "an API key pair (CAM console > API keys, ideally of a sub-user with QcloudCVMReadOnlyAccess)"
    )
    # The API allows 40 req/s (intl doc 213/33254); we ask four times a second at most.
    http_policy: ClassVar[HttpPolicy] = HttpPolicy(min_interval_s=0.25)

    @staticmethod
    def check(client: HttpClient, settings: ProviderSettings) -> str:
        """``planner providers --check``: the cheapest request of the mode in use, and what it answered."""
        creds = settings.credentials
        if creds.get(ENV_ID) and creds.get(ENV_KEY):
            signer = Tc3Signer(
                creds[ENV_ID],
                creds[ENV_KEY],
                service="cvm",
                action="DescribeRegions",
                version="2017-03-12",
                region="ap-guangzhou",
            )
            data = client.post(API_URL, json_body={}, signer=signer).json()
            response = data.get("Response") if isinstance(data, dict) else None
            if not isinstance(response, dict):
                raise ScrapeError("DescribeRegions: no Response object")
            if isinstance(response.get("Error"), dict):
                error = response["Error"]
                raise ScrapeError(f"DescribeRegions: {error.get('Code')}: {str(error.get('Message'))[:120]}")
            regions = response.get("RegionSet")
            return f"DescribeRegions answered with {len(regions) if isinstance(regions, list) else 0} regions"
        data = client.post(f"{WORKBENCH}/area/queryCvmRegion", json_body={}).json()
        regions = _unwrap(data, "queryCvmRegion").get("RegionSet")
        return f"workbench queryCvmRegion answered with {len(regions) if isinstance(regions, list) else 0} regions"

    def mode(self, env: Mapping[str, str]) -> ProviderMode:
        if env.get(ENV_ID) and env.get(ENV_KEY):
            return ProviderMode("account", True, "Official API: list and your account's discounted prices.")
        return ProviderMode(
            "public",
            False,
            "Console workbench endpoint (unofficial): list prices, no account discounts; may break.",
            (ENV_ID, ENV_KEY),
        )

    def scrape(self, client: HttpClient, settings: ProviderSettings) -> Iterator[RawOffer | Issue]:
        creds = settings.credentials
        if creds.get(ENV_ID) and creds.get(ENV_KEY):
            calls: list[tuple[str, str | None]] = [(r, None) for r in (settings.regions or DEFAULT_REGIONS)]
            source = "tencent:api DescribeZoneInstanceConfigInfos"
        else:
            calls = self._workbench_zones(client, settings.regions or DEFAULT_REGIONS)
            source = "tencent:workbench DescribeZoneInstanceConfigInfos"
        failures: list[str] = []
        for region, zone in calls:
            try:
                if zone is None:
                    response = self._api_call(client, creds[ENV_ID], creds[ENV_KEY], region)
                else:
                    response = self._workbench_call(client, region, zone)
                items = list(parse_quota_set(response, region=region, source=source))
            except ScrapeError as exc:
                if "AuthFailure" in str(exc):
                    raise  # wrong keys fail every region alike: say so once
                failures.append(str(exc))
                yield Issue("region_failed", str(exc), region)
                continue
            yield from items
        if calls and len(failures) == len(calls):
            raise ScrapeError(
                f"tencent: every one of {len(failures)} region/zone calls failed; the first: {failures[0]}"
            )

    def _api_call(self, client: HttpClient, secret_id: str, secret_key: str, region: str) -> Any:
        signer = Tc3Signer(
            secret_id,
            secret_key,
            service="cvm",
            action="DescribeZoneInstanceConfigInfos",
            version="2017-03-12",
            region=region,
        )
        body = {"Filters": [{"Name": "instance-charge-type", "Values": CHARGE_TYPES}]}
        data = client.post(API_URL, json_body=body, signer=signer, retry_if=_throttled).json()
        if not isinstance(data, dict) or "Response" not in data:
            raise ScrapeError(f"tencent {region}: no Response object in the API answer")
        return data["Response"]

    def _workbench_zones(self, client: HttpClient, wanted: tuple[str, ...]) -> list[tuple[str, str | None]]:
        data = client.post(f"{WORKBENCH}/area/queryCvmRegion", json_body={}).json()
        regions = _unwrap(data, "queryCvmRegion").get("RegionSet")
        if not isinstance(regions, list):
            raise ScrapeError("tencent queryCvmRegion: no RegionSet list")
        calls: list[tuple[str, str | None]] = []
        for entry in regions:
            if (
                not isinstance(entry, dict)
                or not isinstance(entry.get("zones"), list)
                or "region" not in entry
            ):
                raise ScrapeError("tencent queryCvmRegion: a RegionSet entry lacks region/zones")
            if entry["region"] in wanted:
                calls += [
                    (str(entry["region"]), str(z["zone"]))
                    for z in entry["zones"]
                    if isinstance(z, dict) and z.get("zone")
                ]
        if not calls:
            raise ScrapeError(f"tencent queryCvmRegion: none of {', '.join(wanted)} offered")
        return calls

    def _workbench_call(self, client: HttpClient, region: str, zone: str) -> Any:
        # Request shape verbatim from fuzzbuster/ec2instances.info tencentcloud/scrape.go (see samples/).
        body = {
            "serviceType": "cvm",
            "action": "DescribeZoneInstanceConfigInfos",
            "region": region,
            "data": {
                "Filters": [
                    {"Name": "instance-charge-type", "Values": CHARGE_TYPES},
                    {"Name": "zone", "Values": [zone]},
                ],
                "Platform": "LINUX",
                "Version": "2017-03-12",
            },
            "cgiName": "api",
        }
        params = {"i": "cvm/DescribeZoneInstanceConfigInfos", "uin": "", "region": region}
        data = client.post(f"{WORKBENCH}/api", params=params, json_body=body, retry_if=_throttled).json()
        return _unwrap(data, f"{region}/{zone}")


def _unwrap(data: Any, where: str) -> dict[str, Any]:
    """``{code: 0, data: {Response: {...}}}`` → the Response; a non-zero code is a failure."""
    if not isinstance(data, dict) or "code" not in data:
        raise ScrapeError(f"tencent workbench {where}: answer lacks 'code'")
    if data["code"] != 0:
        raise ScrapeError(
            f"tencent workbench {where}: code {data['code']!r} {str(data.get('msg', ''))[:120]}"
        )
    response = (data.get("data") or {}).get("Response") if isinstance(data.get("data"), dict) else None
    if not isinstance(response, dict):
        raise ScrapeError(f"tencent workbench {where}: no data.Response object")
    return response
