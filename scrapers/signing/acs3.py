"""Alibaba Cloud OpenAPI V3 request signing, ACS3-HMAC-SHA256 (RPC-style APIs such as ECS).

Follows Alibaba Cloud's "V3 request structure and signature" document
(help.aliyun.com/zh/sdk/product-overview/v3-request-structure-and-signature);
``tests/scrapers/test_signing.py`` reproduces its fixed RunInstances example (signature ``06563a9e…``).
Business parameters travel in the query string, so replay keys stay deterministic (the nonce and date
are headers).
"""

from __future__ import annotations

import hashlib
import hmac
import time
import uuid
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from urllib.parse import parse_qsl, quote, urlsplit

ALGORITHM = "ACS3-HMAC-SHA256"


def percent_encode(value: str) -> str:
    """RFC 3986 encoding as the document asks: space is %20, ``*`` is %2A, ``~`` stays."""
    return quote(value, safe="-_.~")


def canonical_query(query: str) -> str:
    pairs = sorted(
        (percent_encode(k), percent_encode(v)) for k, v in parse_qsl(query, keep_blank_values=True)
    )
    return "&".join(f"{k}={v}" for k, v in pairs)


def acs3_headers(
    access_key_id: str,
    access_key_secret: str,
    *,
    method: str,
    url: str,
    body: bytes,
    action: str,
    version: str,
    date: str,
    nonce: str,
    extra_headers: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """The ``x-acs-*`` headers and ``Authorization`` for one request (``date`` like 2023-10-26T10:22:32Z)."""
    parts = urlsplit(url)
    headers = {
        "host": parts.netloc,
        "x-acs-action": action,
        "x-acs-content-sha256": hashlib.sha256(body).hexdigest(),
        "x-acs-date": date,
        "x-acs-signature-nonce": nonce,
        "x-acs-version": version,
    }
    for name, value in (extra_headers or {}).items():
        if name.lower() == "content-type" or name.lower().startswith("x-acs-"):
            headers[name.lower()] = value.strip()
    names = sorted(headers)
    signed = ";".join(names)
    canonical_request = "\n".join(
        [
            method.upper(),
            parts.path or "/",
            canonical_query(parts.query),
            "".join(f"{n}:{headers[n]}\n" for n in names),
            signed,
            headers["x-acs-content-sha256"],
        ]
    )
    string_to_sign = f"{ALGORITHM}\n{hashlib.sha256(canonical_request.encode()).hexdigest()}"
    signature = hmac.new(access_key_secret.encode(), string_to_sign.encode(), hashlib.sha256).hexdigest()
    headers["Authorization"] = (
        f"{ALGORITHM} Credential={access_key_id},SignedHeaders={signed},Signature={signature}"
    )
    del headers["host"]  # signed, but sent by requests itself (and rewritten to the mirror by base_url)
    return headers


class Acs3Signer:
    """A :class:`scrapers.http.Signer` for one ECS action (fresh nonce and date on every attempt)."""

    def __init__(
        self,
        access_key_id: str,
        access_key_secret: str,
        *,
        action: str,
        version: str,
        clock: Callable[[], float] = time.time,
        nonce: Callable[[], str] = lambda: uuid.uuid4().hex,
    ) -> None:
        self._id, self._secret = access_key_id, access_key_secret
        self.action, self.version = action, version
        self._clock, self._nonce = clock, nonce

    def __repr__(self) -> str:  # never show the secret
        return f"Acs3Signer(action={self.action!r})"

    def __call__(self, method: str, url: str, headers: Mapping[str, str], body: bytes) -> dict[str, str]:
        date = datetime.fromtimestamp(self._clock(), UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        return acs3_headers(
            self._id,
            self._secret,
            method=method,
            url=url,
            body=body,
            action=self.action,
            version=self.version,
            date=date,
            nonce=self._nonce(),
            extra_headers=headers,
        )
