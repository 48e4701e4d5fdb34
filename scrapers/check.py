"""``planner providers --check``: one cheap request per provider with the current credentials.

Each check asks the smallest question that proves the mode a refresh would use works: in account mode
a signed call that lists almost nothing (so a refused key shows up here, not in the night's run), in
public mode the first public endpoint the scraper reads. The answer is one :class:`CheckResult`:
``works``, ``refused`` (the provider answered no: credentials, login, permission) or ``failed`` (no
usable answer: network, or a shape we do not understand), with what to do about it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from scrapers import aliyun, autodl, tencent, volcengine
from scrapers.aliyun_api import AliyunApi
from scrapers.base import ScrapeError
from scrapers.http import HttpClient
from scrapers.tc3 import Tc3Signer
from scrapers.types import ProviderSettings
from scrapers.volc_openapi import OPENAPI_URL, Credentials, VolcSigner, parse_instance_types

Status = Literal["works", "refused", "failed", "skipped"]


@dataclass(frozen=True)
class CheckResult:
    """One provider's answer to its cheap request."""

    provider: str
    mode: str
    status: Status
    detail: str  # what was asked and what came back
    todo: str = ""  # what the user should do; empty when it works

    def line(self) -> str:
        text = f"{self.provider}: {self.status} ({self.mode} mode): {self.detail}"
        return f"{text}. To do: {self.todo}" if self.todo else text


# Words a refusal is written in: HTTP 401/403, Tencent AuthFailure*, Aliyun InvalidAccessKeyId* /
# SignatureDoesNotMatch / Forbidden*, Volcengine SignatureDoesNotMatch / InvalidAccessKey, AutoDL login.
_REFUSED = re.compile(
    r"HTTP 40[13]|AuthFailure|InvalidAccessKey|SignatureDoesNotMatch|Forbidden|UnauthorizedOperation|"
    r"NoPermission|InvalidCredential|refused the token|AuthorizeFailed|登录",
    re.IGNORECASE,
)
_NETWORK = re.compile(r"failed after \d+ attempts: (DNS|refused|TLS|timeout|reset|connection)")


def _tencent(client: HttpClient, settings: ProviderSettings) -> str:
    creds = settings.credentials
    if creds.get(tencent.ENV_ID) and creds.get(tencent.ENV_KEY):
        signer = Tc3Signer(
            creds[tencent.ENV_ID],
            creds[tencent.ENV_KEY],
            service="cvm",
            action="DescribeRegions",
            version="2017-03-12",
            region="ap-guangzhou",
        )
        data = client.post(tencent.API_URL, json_body={}, signer=signer).json()
        response = data.get("Response") if isinstance(data, dict) else None
        if not isinstance(response, dict):
            raise ScrapeError("DescribeRegions: no Response object")
        if isinstance(response.get("Error"), dict):
            error = response["Error"]
            raise ScrapeError(f"DescribeRegions: {error.get('Code')}: {str(error.get('Message'))[:120]}")
        regions = response.get("RegionSet")
        return f"DescribeRegions answered with {len(regions) if isinstance(regions, list) else 0} regions"
    data = client.post(f"{tencent.WORKBENCH}/area/queryCvmRegion", json_body={}).json()
    regions = tencent._unwrap(data, "queryCvmRegion").get("RegionSet")
    return (
        f"workbench queryCvmRegion answered with {len(regions) if isinstance(regions, list) else 0} regions"
    )


def _aliyun(client: HttpClient, settings: ProviderSettings) -> str:
    creds = settings.credentials
    if creds.get(aliyun.ENV_ID) and creds.get(aliyun.ENV_SECRET):
        data = AliyunApi(client, creds[aliyun.ENV_ID], creds[aliyun.ENV_SECRET]).call("DescribeRegions", {})
        regions = (data.get("Regions") or {}).get("Region") if isinstance(data.get("Regions"), dict) else None
        return f"DescribeRegions answered with {len(regions) if isinstance(regions, list) else 0} regions"
    version = aliyun.discover_version(client.get(aliyun.PRICING_PAGE).text)
    if version is None:
        return "the pricing page answered but names no price-file version (the remembered one will be used)"
    return f"the pricing page names price file {version}"


def _volcengine(client: HttpClient, settings: ProviderSettings) -> str:
    creds = settings.credentials
    if creds.get(volcengine.ENV_AK) and creds.get(volcengine.ENV_SK):
        signer = VolcSigner(
            Credentials(creds[volcengine.ENV_AK], creds[volcengine.ENV_SK]),
            region="cn-beijing",
            service="ecs",
        )
        params = {"Action": "DescribeInstanceTypes", "Version": "2020-04-01", "MaxResults": "1"}
        specs, _ = parse_instance_types(client.get(OPENAPI_URL, params=params, signer=signer).content)
        return f"DescribeInstanceTypes answered ({len(specs)} type on the first page)"
    params = {"Action": "ListTemplate", "Version": "2020-01-01", "TemplateCode": volcengine.ECS_TEMPLATE_CODE}
    items = volcengine.parse_list_template(
        client.get(volcengine.CALC_URL, params=params, headers=volcengine.CALC_HEADERS).content
    )
    return f"the pricing calculator answered ({len(items)} instance types in the ECS template)"


def _autodl(client: HttpClient, settings: ProviderSettings) -> str:
    token = settings.credentials.get(autodl.ENV_TOKEN, "").strip().removeprefix("Bearer ").strip()
    if token:
        body = {
            "charge_type": "payg",
            "page_index": 1,
            "page_size": 1,
            "gpu_idle_num": 0,
            "default_order": True,
        }
        answer = client.post(autodl.SEARCH_URL, json_body=body, headers={"Authorization": token})
        _, total, _ = autodl.parse_search_page(answer.content, "payg")
        return f"the market search took the token ({total} machines listed)"
    gpus = autodl.parse_gpu_types(client.get(autodl.GPU_TYPE_URL).content)
    return f"the public GPU list answered ({len(gpus)} models); no token, so no market prices"


CHECKS: dict[str, Callable[[HttpClient, ProviderSettings], str]] = {
    "aliyun": _aliyun,
    "tencent": _tencent,
    "volcengine": _volcengine,
    "autodl": _autodl,
}


def check_provider(
    name: str, mode: str, client: HttpClient, settings: ProviderSettings, unlock: tuple[str, ...]
) -> CheckResult:
    """Run ``name``'s cheap request and say what it means; never raises for the provider's answer."""
    try:
        detail = CHECKS[name](client, settings)
    except ScrapeError as exc:
        text = str(exc)
        if _REFUSED.search(text):
            names = " and ".join(settings.credentials) or " and ".join(unlock)
            todo = f"check {names}: the provider refused them (wrong, expired, or without read permission)"
            if name == "autodl":
                todo = "log in to autodl.com again and set AUTODL_TOKEN to the fresh token (no 'Bearer')"
            return CheckResult(name, mode, "refused", text, todo)
        network = _NETWORK.search(text)
        if network:
            where = (
                f"[providers.{name}] base_url" if settings.base_url else "the network (proxy, firewall, DNS)"
            )
            return CheckResult(name, mode, "failed", text, f"check {where}; the request never got an answer")
        return CheckResult(
            name,
            mode,
            "failed",
            text,
            "run `planner refresh -v --provider " + name + "` and report the answer",
        )
    todo = ""
    if mode == "public" and unlock:
        todo = f"optional: set {' and '.join(unlock)} to see more (`planner providers` says what)"
    return CheckResult(name, mode, "works", detail, todo)
