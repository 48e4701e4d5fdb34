"""``planner providers --check``: one cheap request per enabled provider, one line each (mocked HTTP)."""

from __future__ import annotations

import json
import socket

import pytest
from conftest import fixture_bytes, fixture_json

from scrapers.providers import aliyun, autodl, tencent, volcengine
from scrapers.providers.aliyun_api import CENTRAL
from scrapers.providers.volc_openapi import OPENAPI_URL
from scrapers.registry import PROVIDERS

ALL_ENV = [v for cls in PROVIDERS.values() for v in cls.credential_env]
ACCOUNT = {
    "TENCENTCLOUD_SECRET_ID": "AKIDcheck",
    "TENCENTCLOUD_SECRET_KEY": "tencent-check-secret",
    "ALIBABA_CLOUD_ACCESS_KEY_ID": "LTAIcheck",
    "ALIBABA_CLOUD_ACCESS_KEY_SECRET": "aliyun-check-secret",
    "VOLCENGINE_ACCESS_KEY": "AKLTcheck",
    "VOLCENGINE_SECRET_KEY": "volc-check-secret",
    "AUTODL_TOKEN": "autodl-check-token",
}


@pytest.fixture
def env(monkeypatch):
    for name in ALL_ENV:
        monkeypatch.delenv(name, raising=False)

    def set_all(values):
        for name, value in values.items():
            monkeypatch.setenv(name, value)

    return set_all


def lines(result):
    return {line.split(":", 1)[0]: line for line in result.stdout.splitlines()}


def test_public_mode_every_provider_works(rsps, run_cli, env):
    rsps.get(aliyun.PRICING_PAGE, body=fixture_bytes("aliyun", "pricing_page.constructed.html"))
    rsps.post(
        f"{tencent.WORKBENCH}/area/queryCvmRegion",
        json=fixture_json("tencent", "queryCvmRegion.constructed.json"),
    )
    rsps.get(volcengine.CALC_URL, body=fixture_bytes("volcengine", "list_template_gpu.json"))
    rsps.get(autodl.GPU_TYPE_URL, body=fixture_bytes("autodl", "gpu_type.json"))
    result = run_cli("providers", "--check")
    assert result.exit_code == 0, result.output
    got = lines(result)
    # the state, and what each answer showed: the price file's version, the regions, the models
    shown = {"aliyun": "price file 2.0.300", "tencent": "with 3 regions", "volcengine": "calculator",
             "autodl": "(14 models)"}  # fmt: skip
    for name, value in shown.items():
        assert got[name].startswith(f"{name}: works (public mode): ") and value in got[name], got[name]
    assert "To do: optional: set AUTODL_TOKEN" in got["autodl"]
    assert len(rsps.calls) == 4  # one request each


def test_account_mode_refusals_say_what_to_do(rsps, run_cli, env):
    env(ACCOUNT)
    rsps.post(
        tencent.API_URL,
        json={
            "Response": {"Error": {"Code": "AuthFailure.SecretIdNotFound", "Message": "no"}, "RequestId": "r"}
        },
    )
    rsps.get(
        CENTRAL,
        status=404,
        json={"Code": "InvalidAccessKeyId.NotFound", "Message": "Specified access key is not found."},
    )
    rsps.get(OPENAPI_URL, body=fixture_bytes("volcengine", "describe_instance_types_p1.json"))
    rsps.post(autodl.SEARCH_URL, body=fixture_bytes("autodl", "authorize_failed.json"))
    result = run_cli("providers", "--check", "--format", "json")
    assert result.exit_code == 1
    got = {r["provider"]: r for r in json.loads(result.stdout)}
    assert (
        got["tencent"]["status"] == "refused" and "AuthFailure.SecretIdNotFound" in got["tencent"]["detail"]
    )
    assert "TENCENTCLOUD_SECRET_ID" in got["tencent"]["todo"]
    assert "TENCENTCLOUD_SECRET_KEY" in got["tencent"]["todo"]
    assert got["aliyun"]["status"] == "refused" and "InvalidAccessKeyId" in got["aliyun"]["detail"]
    volcengine = got["volcengine"]
    assert (volcengine["mode"], volcengine["status"], volcengine["todo"]) == ("account", "works", "")
    assert "DescribeInstanceTypes" in volcengine["detail"] and "(2 type" in volcengine["detail"]
    assert got["autodl"]["status"] == "refused" and "AUTODL_TOKEN" in got["autodl"]["todo"]
    signed = [c.request for c in rsps.calls if c.request.url.startswith(tencent.API_URL)]
    assert signed and signed[0].headers["X-TC-Action"] == "DescribeRegions"
    assert "secret" not in result.stdout  # never a credential's value


def _closed_port() -> int:
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    return port


def test_network_failure_names_the_mirror_and_the_cause(run_cli, env, tmp_path):
    mirror = f"http://127.0.0.1:{_closed_port()}"
    config = tmp_path / "planner.toml"
    config.write_text(
        "".join(
            f'[providers.{name}]\nbase_url = "{mirror}"\n' for name in ("aliyun", "tencent", "volcengine")
        )
        + "[providers.autodl]\nenabled = false\n",
        encoding="utf-8",
    )
    result = run_cli("--config", str(config), "providers", "--check")
    assert result.exit_code == 1
    got = lines(result)
    for name in ("aliyun", "tencent", "volcengine"):
        assert f"{name}: failed (public mode): {name}: " in got[name]
        assert f"{mirror}/" in got[name] and "failed after 1 attempts: refused" in got[name]
        assert f"To do: check [providers.{name}] base_url" in got[name]
    assert got["autodl"].startswith("autodl: skipped (public mode): ") and "disabled" in got["autodl"]


def test_check_is_listed_in_help(run_cli):
    out = run_cli("providers", "--help").stdout
    assert "--check" in out and "planner providers --check" in out


def test_a_provider_without_a_check_hook_is_skipped_not_a_crash():
    from scrapers.check import check_provider
    from scrapers.http import HttpClient
    from scrapers.types import ProviderSettings

    client = HttpClient("ppio", version="0")
    result = check_provider("ppio", "public", client, ProviderSettings(), ())
    assert (result.status, result.detail) == ("skipped", "no cheap check for this provider")
    assert "planner refresh --provider ppio" in result.todo
