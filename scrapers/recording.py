"""Save-raw and from-raw: every response written to a folder, and the folder served back with no network.

Layout: ``<dir>/<provider>/<seq:04d>-<METHOD>-<key[:12]>.body`` (the response bytes) beside a ``.json``
sidecar ``{method, url, params, request_body, status, headers, match_key, recorded_at}``. File names come
only from a counter, the method and a hash: never from provider data.

Secrets never reach the folder: query parameters and JSON keys that look like credentials, signatures
or tokens are replaced by ``***``, request headers are not written at all, and the literal secret values
the client knows are scrubbed from every string written (response bodies included).

Matching is deterministic: the key is a hash of the method, the logical URL without volatile signing
parameters (sorted) and the request body. Several recordings of one key are served in recorded order (a
500 then a 200 replays as a retry that succeeds); once they run out, the last one repeats.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import defaultdict
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from scrapers.base import ScrapeError

if TYPE_CHECKING:
    from scrapers.http import HttpResponse

REDACTED = "***"
# Names of parameters/keys whose values are secrets or change on every signed attempt.
# PublicKey: UCloud's (CompShare's) key id, sent as a query parameter; a replay signs with a placeholder.
_SENSITIVE = re.compile(
    r"signature|token|secret|password|credential|authorization|accesskey|publickey|cookie", re.I
)
_VOLATILE = re.compile(r"^(timestamp|nonce|signaturenonce|x-tc-timestamp)$", re.I)


def redact_url(url: str) -> str:
    """``url`` with sensitive query values replaced by ``***`` (for messages and sidecars)."""
    parts = urlsplit(url)
    if not parts.query:
        return url
    query = [(k, REDACTED if _SENSITIVE.search(k) else v) for k, v in parse_qsl(parts.query, True)]
    return urlunsplit(parts._replace(query=urlencode(query)))


def scrub_text(text: str, secrets: tuple[str, ...]) -> str:
    """Replace every known secret value in ``text`` by ``***``."""
    for secret in secrets:
        text = text.replace(secret, REDACTED)
    return text


def _scrub_json(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: REDACTED if _SENSITIVE.search(str(k)) else _scrub_json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_scrub_json(v) for v in value]
    return value


def match_key(method: str, url: str, body: bytes) -> str:
    """The replay key of a request: method, URL minus volatile/sensitive parameters, body hash."""
    parts = urlsplit(url)
    query = sorted(
        (k, v) for k, v in parse_qsl(parts.query, True) if not (_SENSITIVE.search(k) or _VOLATILE.match(k))
    )
    canonical = "\n".join([method.upper(), parts.netloc, parts.path, urlencode(query)])
    digest = hashlib.sha256(canonical.encode())
    digest.update(b"\n" + hashlib.sha256(body).digest())
    return digest.hexdigest()


class Recorder:
    """Writes each response a client receives into one provider's folder."""

    def __init__(self, folder: Path, secrets: tuple[str, ...]) -> None:
        self.folder = folder
        self.secrets = secrets
        self.folder.mkdir(parents=True, exist_ok=True)
        self._seq = len(list(self.folder.glob("*.json")))

    def record(self, method: str, url: str, body: bytes, resp: HttpResponse) -> Path:
        key = match_key(method, url, body)
        self._seq += 1
        stem = f"{self._seq:04d}-{method.upper()}-{key[:12]}"
        try:
            request_body: Any = _scrub_json(json.loads(body)) if body else None
        except ValueError:
            request_body = REDACTED  # not JSON: we cannot tell what is secret in it, so keep none of it
        parts = urlsplit(url)
        sidecar = {
            "method": method.upper(),
            "url": redact_url(urlunsplit(parts._replace(query=""))),
            "params": {k: REDACTED if _SENSITIVE.search(k) else v for k, v in parse_qsl(parts.query, True)},
            "request_body": request_body,
            "status": resp.status,
            "headers": dict(resp.headers),
            "match_key": key,
            "recorded_at": datetime.now(UTC).isoformat(timespec="seconds"),
        }
        text = scrub_text(json.dumps(sidecar, ensure_ascii=False, indent=1), self.secrets)
        content = resp.content
        for secret in self.secrets:
            content = content.replace(secret.encode(), REDACTED.encode())
        (self.folder / f"{stem}.body").write_bytes(content)
        (self.folder / f"{stem}.json").write_text(text, encoding="utf-8")
        return self.folder / f"{stem}.json"


class Replayer:
    """Serves recorded responses for one provider's folder; an unknown request is a ScrapeError."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._by_key: dict[str, list[tuple[int, dict[str, str], Path]]] = defaultdict(list)
        self._served: dict[str, int] = defaultdict(int)
        for sidecar in sorted(folder.glob("*.json")) if folder.is_dir() else []:
            try:
                meta = json.loads(sidecar.read_text(encoding="utf-8"))
                entry = (int(meta["status"]), dict(meta.get("headers") or {}), sidecar.with_suffix(".body"))
                self._by_key[str(meta["match_key"])].append(entry)
            except (ValueError, KeyError, TypeError, OverflowError, RecursionError) as exc:
                raise ScrapeError(f"unreadable recording {sidecar.name}: {exc}") from None

    def serve(self, method: str, url: str, body: bytes) -> HttpResponse:
        from scrapers.http import HttpResponse

        key = match_key(method, url, body)
        entries = self._by_key.get(key)
        if not entries:
            raise ScrapeError(f"no recorded response for {method} {redact_url(url)} in {self.folder}")
        index = min(self._served[key], len(entries) - 1)
        self._served[key] += 1
        status, headers, path = entries[index]
        try:
            content = path.read_bytes()
        except OSError as exc:
            raise ScrapeError(f"recorded body {path.name} missing: {exc.strerror}") from None
        return HttpResponse(status, url, headers, content)
