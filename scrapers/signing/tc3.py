"""Tencent Cloud API 3.0 request signing, TC3-HMAC-SHA256.

Follows Tencent's "Signature v3" document (cloud.tencent.com/document/api/213/30654, English mirror
tencentcloud.com/document/api/213/33224); ``tests/scrapers/test_signing.py`` reproduces its worked example
(DescribeInstances, timestamp 1551113065, signature ``72e494ea…``). Signed headers: content-type and host.
"""

from __future__ import annotations

import hashlib
import hmac
import time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from urllib.parse import urlsplit

ALGORITHM = "TC3-HMAC-SHA256"


def _hmac(key: bytes, msg: str) -> bytes:
    return hmac.new(key, msg.encode("utf-8"), hashlib.sha256).digest()


def tc3_authorization(
    secret_id: str,
    secret_key: str,
    *,
    service: str,
    host: str,
    timestamp: int,
    content_type: str,
    payload: bytes,
    method: str = "POST",
    query: str = "",
) -> str:
    """The ``Authorization`` header value for one request."""
    date = datetime.fromtimestamp(timestamp, UTC).strftime("%Y-%m-%d")  # UTC date, per the doc's warning
    signed_headers = "content-type;host"
    canonical_request = "\n".join(
        [
            method.upper(),
            "/",
            query,
            f"content-type:{content_type.strip().lower()}\nhost:{host.strip().lower()}\n",
            signed_headers,
            hashlib.sha256(payload).hexdigest(),
        ]
    )
    scope = f"{date}/{service}/tc3_request"
    string_to_sign = "\n".join(
        [ALGORITHM, str(timestamp), scope, hashlib.sha256(canonical_request.encode()).hexdigest()]
    )
    key = _hmac(_hmac(_hmac(("TC3" + secret_key).encode("utf-8"), date), service), "tc3_request")
    signature = hmac.new(key, string_to_sign.encode("utf-8"), hashlib.sha256).hexdigest()
    return (
        f"{ALGORITHM} Credential={secret_id}/{scope}, SignedHeaders={signed_headers}, Signature={signature}"
    )


class Tc3Signer:
    """A :class:`scrapers.http.Signer` for one action in one region (fresh timestamp per attempt)."""

    def __init__(
        self,
        secret_id: str,
        secret_key: str,
        *,
        service: str,
        action: str,
        version: str,
        region: str,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._id, self._key = secret_id, secret_key
        self.service, self.action, self.version, self.region = service, action, version, region
        self._clock = clock

    def __repr__(self) -> str:  # never show the key
        return f"Tc3Signer(service={self.service!r}, action={self.action!r}, region={self.region!r})"

    def __call__(self, method: str, url: str, headers: Mapping[str, str], body: bytes) -> dict[str, str]:
        timestamp = int(self._clock())
        content_type = {k.lower(): v for k, v in headers.items()}.get("content-type", "application/json")
        auth = tc3_authorization(
            self._id,
            self._key,
            service=self.service,
            host=urlsplit(url).netloc,
            timestamp=timestamp,
            content_type=content_type,
            payload=body,
            method=method,
            query=urlsplit(url).query,
        )
        return {
            "Authorization": auth,
            "X-TC-Action": self.action,
            "X-TC-Version": self.version,
            "X-TC-Timestamp": str(timestamp),
            "X-TC-Region": self.region,
        }
