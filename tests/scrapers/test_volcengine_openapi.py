"""Volcengine signing (against the documented example) and the DescribeInstanceTypes client."""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
import responses

from scrapers.base import ScrapeError
from scrapers.http import HttpClient, HttpPolicy
from scrapers.providers.volc_openapi import (
    OPENAPI_URL,
    Credentials,
    VolcSigner,
    canonical_query,
    describe_instance_types,
    parse_instance_types,
    sign,
)

FIXTURES = Path(__file__).parent.parent / "fixtures" / "volcengine"

# The worked example of https://www.volcengine.com/docs/6369/67270 (2021 edition, also reproduced by the
# cloud-api-signer package's test_sign_demo_ok); its Authorization value is printed verbatim in the
# public-parameter page https://www.volcengine.com/docs/6500/1285432. Demo keys without permissions.
DOC_AK = "AKLTMjI2ODVlYzI3ZGY1NGU4ZjhjYWRjMTlmNTM5OTZkYzE"
DOC_SK = "TnpCak5XWXpZV1U0WkRaaE5ERmxaR0ZpTmpjeVkyUXlZek0wTWpJMU1qWQ=="
DOC_SIGNATURE = "28eeabbbd726b87002e0fe58ad8c1c768e619b06e2646f35b6ad7ed029a6d8a7"
DOC_CANONICAL_REQUEST_HASH = "3a4d4dee07c3308a52da01bc12d7a83c3705bfa543f51648f46de880bb2a7447"
EMPTY_SHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"


def _doc_example():
    return sign(
        Credentials(DOC_AK, DOC_SK),
        method="GET",
        host="iam.volcengineapi.com",
        query={"Action": "ListUsers", "Version": "2018-01-01", "Limit": 10, "Offset": 0},
        region="cn-north-1",
        service="iam",
        content_type="application/x-www-form-urlencoded; charset=utf-8",
        now=datetime(2020, 12, 30, 8, 18, 5, tzinfo=UTC),
    )


def test_documented_example_signature_matches():
    signed = _doc_example()
    assert signed.signature == DOC_SIGNATURE
    assert signed.headers["Authorization"] == (
        f"HMAC-SHA256 Credential={DOC_AK}/20201230/cn-north-1/iam/request, "
        f"SignedHeaders=content-type;host;x-content-sha256;x-date, Signature={DOC_SIGNATURE}"
    )
    assert signed.headers["X-Date"] == "20201230T081805Z"
    assert signed.headers["X-Content-Sha256"] == EMPTY_SHA256


def test_documented_example_intermediate_strings():
    signed = _doc_example()
    assert signed.canonical_request.split("\n")[:3] == [
        "GET",
        "/",
        "Action=ListUsers&Limit=10&Offset=0&Version=2018-01-01",
    ]
    assert hashlib.sha256(signed.canonical_request.encode()).hexdigest() == DOC_CANONICAL_REQUEST_HASH
    assert signed.string_to_sign == (
        f"HMAC-SHA256\n20201230T081805Z\n20201230/cn-north-1/iam/request\n{DOC_CANONICAL_REQUEST_HASH}"
    )


def test_signature_changes_with_body_and_secret():
    base = _doc_example().signature
    other_key = sign(
        Credentials(DOC_AK, DOC_SK + "x"),
        method="GET",
        host="iam.volcengineapi.com",
        query={"Action": "ListUsers", "Version": "2018-01-01", "Limit": 10, "Offset": 0},
        region="cn-north-1",
        service="iam",
        content_type="application/x-www-form-urlencoded; charset=utf-8",
        now=datetime(2020, 12, 30, 8, 18, 5, tzinfo=UTC),
    )
    assert other_key.signature != base


def test_canonical_query_is_rfc3986_and_sorted():
    assert canonical_query({"b": "x y", "a": "1/2", "NextToken": "a+b=~"}) == (
        "NextToken=a%2Bb%3D~&a=1%2F2&b=x%20y"
    )


def test_secret_never_in_repr():
    assert DOC_SK not in repr(Credentials(DOC_AK, DOC_SK))


def test_signer_signs_content_type_of_a_post():
    signer = VolcSigner(
        Credentials(DOC_AK, DOC_SK),
        region="cn-beijing",
        service="ecs",
        clock=lambda: datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC),
    )
    headers = signer("POST", OPENAPI_URL + "?Action=X&Version=1", {"Content-Type": "application/json"}, b"{}")
    assert "SignedHeaders=content-type;host;x-content-sha256;x-date" in headers["Authorization"]
    assert "/20260102/cn-beijing/ecs/request" in headers["Authorization"]
    assert headers["X-Content-Sha256"] == hashlib.sha256(b"{}").hexdigest()
    assert DOC_SK not in json.dumps(headers)


def _page(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


def test_parse_instance_types_reads_both_casings():
    specs, token = parse_instance_types(_page("describe_instance_types_p1.json"))
    assert token == "page2+/="
    assert specs["ecs.gni2.3xlarge"].name == "NVIDIA A10"
    assert specs["ecs.gni2.3xlarge"].count == 1.0
    # the size as sent (MiB here); the pipeline decides what it means (planner.ingest.normalize)
    assert specs["ecs.gni2.3xlarge"].memory_size_undocumented == 24576
    assert specs["ecs.g3i.large"] is None
    specs2, token2 = parse_instance_types(_page("describe_instance_types_p2.json"))
    assert token2 == ""
    assert specs2["ecs.pni2.3xlarge"].name == "NVIDIA A800-SXM4-80GB"
    assert specs2["ecs.pni2.3xlarge"].memory_size_undocumented == 81920
    assert specs2["ecs.c3a.large"] is None


def test_parse_instance_types_error_names_the_fix():
    with pytest.raises(ScrapeError, match="SignatureDoesNotMatch.*VOLCENGINE_ACCESS_KEY"):
        parse_instance_types(_page("describe_instance_types_auth_error.json"))


@pytest.mark.parametrize(
    "payload, match",
    [
        (b"<html>login</html>", "not JSON"),
        (b'{"Result": {}}', "no Result.InstanceTypes"),
    ],
)
def test_parse_instance_types_rejects_changed_shapes(payload, match):
    with pytest.raises(ScrapeError, match=match):
        parse_instance_types(payload)


def test_entries_without_id_or_gpu_name_are_left_out_not_fatal():
    payload = (
        b'{"Result": {"InstanceTypes": [{"Gpu": {}}, {"InstanceTypeId": "ecs.x.y", '
        b'"Gpu": {"GpuDevices": [{"Count": 2, "ProductName": null}]}}, {"InstanceTypeId": "ecs.c3a.large"}]}}'
    )
    specs, _ = parse_instance_types(payload)
    assert specs == {"ecs.c3a.large": None}  # ecs.x.y left out: priced only if documented, else skipped


def _client() -> HttpClient:
    return HttpClient("volcengine", version="0", policy=HttpPolicy(max_retries=0), sleep=lambda s: None)


@responses.activate
def test_describe_instance_types_follows_next_token_and_signs_every_page():
    responses.get(OPENAPI_URL, body=_page("describe_instance_types_p1.json"))
    responses.get(OPENAPI_URL, body=_page("describe_instance_types_p2.json"))
    specs = describe_instance_types(_client(), Credentials("AKTEST", "SKSECRET"))
    assert set(specs) == {"ecs.gni2.3xlarge", "ecs.g3i.large", "ecs.pni2.3xlarge", "ecs.c3a.large"}
    first, second = (parse_qs(urlsplit(c.request.url).query) for c in responses.calls)
    assert first["Action"] == ["DescribeInstanceTypes"] and first["Version"] == ["2020-04-01"]
    assert "NextToken" not in first
    assert second["NextToken"] == ["page2+/="]
    for call in responses.calls:
        auth = call.request.headers["Authorization"]
        assert auth.startswith("HMAC-SHA256 Credential=AKTEST/") and "/cn-beijing/ecs/request" in auth
        assert "SKSECRET" not in auth
        assert call.request.headers["X-Date"].endswith("Z")


@responses.activate
def test_describe_instance_types_stops_on_a_repeating_token():
    looping = json.loads(_page("describe_instance_types_p1.json"))
    responses.get(OPENAPI_URL, json=looping)
    with pytest.raises(ScrapeError, match="NextToken repeats"):
        describe_instance_types(_client(), Credentials("AKTEST", "SKSECRET"))
    assert len(responses.calls) == 2


def test_gpu_memory_size_is_passed_on_as_sent_for_the_pipeline_to_check():
    """Memory.Size of a GPU device has no documented unit: the scraper passes it on, never guesses."""
    specs, token = parse_instance_types(_page("describe_instance_types_memory_units.constructed.json"))
    assert token == ""
    l20 = specs["ecs.gni3.8xlarge"]
    assert (l20.name, l20.count, l20.memory_gb, l20.memory_size_undocumented) == (
        "NVIDIA L20",
        1.0,
        None,
        49152,
    )
    assert specs["ecs.gni3.16xlarge"].memory_size_undocumented == 48
    h20 = specs["ecs.hpcpni3ln.45xlarge"]  # Size null: nothing to check
    assert (h20.count, h20.memory_gb, h20.memory_size_undocumented) == (8.0, None, None)


def test_gpu_memory_size_unit_is_checked_against_the_model_not_guessed():
    """The pipeline reads the size as MiB only where that fits the model; otherwise it says why."""
    from planner.ingest.normalize import check_memory_size

    assert check_memory_size("NVIDIA L20", 49152) == (48.0, None)
    memory, note = check_memory_size("NVIDIA L20", 48)  # 48 GB, or 48 MiB? reported, not guessed
    assert memory is None and "read as GB it would be L20-48GB" in note
    memory, note = check_memory_size("NVIDIA A10", 12345)
    assert memory is None and "matches no memory size of NVIDIA A10" in note
    memory, note = check_memory_size("Mystery GPU 9000", 24576)
    assert memory is None and "not in the catalog" in note
