"""Volcengine OpenAPI: HMAC-SHA256 request signing and the ECS ``DescribeInstanceTypes`` call.

The algorithm, from https://www.volcengine.com/docs/6369/67269 (签名方法) and the worked example in
https://www.volcengine.com/docs/6369/67270 (签名过程Demo), both read 2026 via the search index:

    CanonicalRequest = Method \\n "/" \\n Query \\n CanonicalHeaders \\n SignedHeaders \\n sha256(body)
    StringToSign  = "HMAC-SHA256" \\n X-Date \\n <YYYYMMDD>/<region>/<service>/request \\n sha256(CR)
    kSigning      = HMAC(HMAC(HMAC(HMAC(SK, YYYYMMDD), region), service), "request")
    Authorization = HMAC-SHA256 Credential=<AK>/<scope>, SignedHeaders=<...>, Signature=HMAC(kSigning, STS)

(hashes and the signature hex-encoded). ``tests/scrapers/test_volcengine_openapi.py`` reproduces the
documented example (AK ``AKLTMjI2…``, X-Date 20201230T081805Z, Signature ``28eeabbb…``).

Unlike AWS SigV4 the secret is used as is (no "AWS4" prefix) and the scope ends in "request".
"""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any
from urllib.parse import parse_qsl, quote, urlsplit

from scrapers.base import ScrapeError
from scrapers.http import HttpClient

ALGORITHM = "HMAC-SHA256"
OPENAPI_URL = "https://open.volcengineapi.com/"


@dataclass(frozen=True)
class Credentials:
    """An access key pair. The secret never appears in ``repr`` (and so never in logs or errors)."""

    access_key: str
    secret_key: str = field(repr=False)


@dataclass(frozen=True)
class SignedRequest:
    """The headers to send, plus the intermediate strings (kept so tests can check each step)."""

    headers: dict[str, str]
    canonical_request: str
    string_to_sign: str
    signature: str


def _uri_encode(value: str) -> str:
    # RFC 3986 unreserved characters stay as they are; everything else is %XX (space is %20, not +).
    return quote(value, safe="-_.~")


def canonical_query(params: Mapping[str, object]) -> str:
    """Percent-encode keys and values (RFC 3986) and join them sorted by key: ``A=1&B=2``."""
    pairs = sorted((_uri_encode(str(k)), _uri_encode(str(v))) for k, v in params.items())
    return "&".join(f"{k}={v}" for k, v in pairs)


def _hmac(key: bytes, message: str) -> bytes:
    return hmac.new(key, message.encode("utf-8"), hashlib.sha256).digest()


def sign(
    credentials: Credentials,
    *,
    method: str,
    host: str,
    query: Mapping[str, object],
    region: str,
    service: str,
    body: bytes = b"",
    content_type: str | None = None,
    path: str = "/",
    now: datetime | None = None,
) -> SignedRequest:
    """Sign one request and return the headers to add (``Host``, ``X-Date``, ``X-Content-Sha256``,
    ``Authorization`` and ``Content-Type`` when given).

    ``now`` defaults to the current UTC time; tests pass a fixed one.
    """
    when = (now or datetime.now(UTC)).astimezone(UTC)
    x_date = when.strftime("%Y%m%dT%H%M%SZ")
    short_date = x_date[:8]
    payload_hash = hashlib.sha256(body).hexdigest()

    headers = {"Host": host, "X-Date": x_date, "X-Content-Sha256": payload_hash}
    if content_type is not None:
        headers["Content-Type"] = content_type
    # Header names lower-cased and sorted; values trimmed. Every header we send is signed.
    lowered = sorted((name.lower(), value.strip()) for name, value in headers.items())
    canonical_headers = "".join(f"{name}:{value}\n" for name, value in lowered)
    signed_headers = ";".join(name for name, _ in lowered)

    canonical_request = "\n".join(
        [method.upper(), path, canonical_query(query), canonical_headers, signed_headers, payload_hash]
    )
    scope = f"{short_date}/{region}/{service}/request"
    string_to_sign = "\n".join(
        [ALGORITHM, x_date, scope, hashlib.sha256(canonical_request.encode("utf-8")).hexdigest()]
    )
    key = _hmac(credentials.secret_key.encode("utf-8"), short_date)
    for part in (region, service, "request"):
        key = _hmac(key, part)
    signature = hmac.new(key, string_to_sign.encode("utf-8"), hashlib.sha256).hexdigest()

    headers["Authorization"] = (
        f"{ALGORITHM} Credential={credentials.access_key}/{scope}, "
        f"SignedHeaders={signed_headers}, Signature={signature}"
    )
    return SignedRequest(headers, canonical_request, string_to_sign, signature)


class VolcSigner:
    """A :class:`scrapers.http.Signer` for one service and region (fresh X-Date on every attempt)."""

    def __init__(
        self,
        credentials: Credentials,
        *,
        region: str,
        service: str,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self.credentials, self.region, self.service, self.clock = credentials, region, service, clock

    def __call__(self, method: str, url: str, headers: Mapping[str, str], body: bytes) -> dict[str, str]:
        parts = urlsplit(url)
        content_type = {k.lower(): v for k, v in headers.items()}.get("content-type")
        signed = sign(
            self.credentials,
            method=method,
            host=parts.netloc,
            path=parts.path or "/",
            query=dict(parse_qsl(parts.query, keep_blank_values=True)),
            region=self.region,
            service=self.service,
            body=body,
            content_type=content_type,
            now=self.clock(),
        )
        return signed.headers


@dataclass(frozen=True)
class GpuSpec:
    """What one instance type carries: GPU model, count, memory per GPU (GiB), and where we learnt it."""

    name: str
    count: float
    memory_gb: float | None
    source: str
    # Memory.Size as sent, its unit undocumented: the pipeline checks it against the catalog
    # (planner.ingest.normalize.check_memory_size), so the scraper never decides what a GPU is.
    memory_size_undocumented: float | None = None


def _ci(obj: Any, *names: str) -> Any:
    # The SDK spells "Gpu"/"GpuDevices", fuzzbuster's Go struct "GPU"/"GPUDevices" (providers.md §3.1).
    if isinstance(obj, dict):
        lowered = {k.lower(): v for k, v in obj.items()}
        for name in names:
            if name.lower() in lowered:
                return lowered[name.lower()]
    return None


def parse_instance_types(payload: bytes) -> tuple[dict[str, GpuSpec | None], str]:
    """``DescribeInstanceTypes`` page -> ({type: GpuSpec, or None when it has no GPU}, NextToken)."""
    try:
        data = json.loads(payload)
    except (ValueError, UnicodeDecodeError, RecursionError):
        raise ScrapeError("Volcengine DescribeInstanceTypes: the answer is not JSON") from None
    error = _ci(_ci(data, "ResponseMetadata"), "Error")
    if error:
        code = _ci(error, "Code")
        hint = (
            " (check VOLCENGINE_ACCESS_KEY / VOLCENGINE_SECRET_KEY)"
            if "Sign" in str(code) or ("AccessKey" in str(code))
            else ""
        )
        raise ScrapeError(f"Volcengine DescribeInstanceTypes failed: {code}: {_ci(error, 'Message')}{hint}")
    result = _ci(data, "Result")
    types = _ci(result, "InstanceTypes")
    if not isinstance(types, list):
        raise ScrapeError("Volcengine DescribeInstanceTypes: no Result.InstanceTypes list (shape changed?)")
    specs: dict[str, GpuSpec | None] = {}
    for entry in types:
        itype = _ci(entry, "InstanceTypeId")
        if not isinstance(itype, str) or not itype:
            continue  # nothing to join it to; the calculator's own rows are reported if unpriced
        devices = _ci(_ci(entry, "Gpu", "GPU"), "GpuDevices", "GPUDevices")
        devices = devices if isinstance(devices, list) else []
        gpus = [d for d in devices if type(_ci(d, "Count")) is int and 0 < _ci(d, "Count") <= 64]
        if not gpus:
            specs[itype] = None
            continue
        name, mib = _ci(gpus[0], "ProductName"), _ci(_ci(gpus[0], "Memory"), "Size")
        if (
            len({str(_ci(d, "ProductName")) for d in gpus}) > 1
            or not isinstance(name, str)
            or not name.strip()
        ):
            # Mixed or unnamed GPUs: left out of the facts, so the type is priced only if documented
            # (DOCUMENTED_TYPES) and otherwise reported as skipped with its family's reason.
            continue
        sized = isinstance(mib, int | float) and not isinstance(mib, bool) and 0 < mib < 1e9
        specs[itype] = GpuSpec(
            name.strip(),
            float(sum(_ci(d, "Count") for d in gpus)),
            None,
            "DescribeInstanceTypes",
            float(mib) if sized else None,
        )
    token = _ci(result, "NextToken")
    return specs, token if isinstance(token, str) else ""


def describe_instance_types(client: HttpClient, creds: Credentials) -> dict[str, GpuSpec | None]:
    """Every instance type with its GPU facts, following ``NextToken`` (signed, ECS 2020-04-01)."""
    signer = VolcSigner(creds, region="cn-beijing", service="ecs")
    specs: dict[str, GpuSpec | None] = {}
    token, seen = "", set()
    for _ in range(100):  # 100 pages x 100 types: far more types than Volcengine sells
        params = {"Action": "DescribeInstanceTypes", "Version": "2020-04-01", "MaxResults": "100"}
        if token:
            params["NextToken"] = token
        page, token = parse_instance_types(client.get(OPENAPI_URL, params=params, signer=signer).content)
        specs |= page
        if not token:
            return specs
        if token in seen:
            raise ScrapeError("Volcengine DescribeInstanceTypes: NextToken repeats (paging loop)")
        seen.add(token)
    raise ScrapeError("Volcengine DescribeInstanceTypes: more than 100 pages")
