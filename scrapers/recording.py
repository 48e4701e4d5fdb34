"""Save-raw and from-raw: every response written to a folder, and the folder served back with no network.

Layout: ``<dir>/<provider>/<seq:04d>-<METHOD>-<key[:12]>.body`` (the response bytes) beside a ``.json``
sidecar ``{method, url, params, request_body, status, headers, match_key, recorded_at}``. File names come
only from a counter, the method and a hash: never from provider data.

Secrets never reach the folder: query parameters and JSON keys that look like credentials, signatures
or tokens are replaced by ``***``, request headers are not written at all, and the literal secret values
the client knows are scrubbed from every string written (response bodies included).

A recorded folder is untrusted input (it may come from anyone): only regular files directly inside
it are read, never through a symbolic link, never a device or a FIFO, and none larger than
``MAX_RESPONSE_BYTES``. Writing never follows a link either: each file is created new
(``O_EXCL | O_NOFOLLOW``), so a link planted under a predictable name is refused, not written through.

Matching is deterministic: the key is a hash of the method, the logical URL without volatile signing
parameters (sorted) and the request body. Several recordings of one key are served in recorded order (a
500 then a 200 replays as a retry that succeeds); once they run out, the last one repeats.
"""

from __future__ import annotations

import base64
import errno
import hashlib
import json
import os
import re
import stat
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from scrapers.base import ScrapeError


@dataclass(frozen=True)
class HttpResponse:
    """What a scraper gets back: status, logical URL, a few headers, the body bytes."""

    status: int
    url: str
    headers: Mapping[str, str]
    content: bytes
    # The client's secrets, scrubbed from any text quoted in an error (before it is cut short).
    secrets: tuple[str, ...] = field(default=(), repr=False, compare=False)

    @property
    def text(self) -> str:
        return self.content.decode("utf-8", errors="replace")

    def json(self) -> Any:
        """The body as JSON; an HTML login page or a truncated body is a :class:`ScrapeError`."""
        try:
            return json.loads(self.content)
        except (ValueError, UnicodeDecodeError, RecursionError):  # RecursionError: [[[[... nested 10^5 deep
            snippet = re.sub(r"\s+", " ", scrub_text(self.text[:2000], self.secrets))[:80]
            raise ScrapeError(f"{redact_url(self.url)} did not return JSON (starts {snippet!r})") from None


REDACTED = "***"
# Names of parameters/keys whose values are secrets or change on every signed attempt.
# PublicKey: UCloud's (CompShare's) key id, sent as a query parameter; a replay signs with a placeholder.
_SENSITIVE = re.compile(
    r"signature|token|secret|password|credential|authorization|accesskey|publickey|cookie", re.I
)
_VOLATILE = re.compile(r"^(timestamp|nonce|signaturenonce|x-tc-timestamp)$", re.I)
# The largest body kept of one response (decoded), recorded or replayed: a price list is a few MB.
MAX_RESPONSE_BYTES = 64 * 2**20
MAX_SIDECAR_BYTES = 2**20
# A scheme a credential may be given with, removed before it is sent ("Bearer X" is sent as X).
_AUTH_SCHEME = re.compile(r"^(bearer|basic|token)\s+", re.I)


def secret_forms(secrets: tuple[str, ...] | list[str]) -> tuple[str, ...]:
    """Every form in which a secret may be sent, and so echoed back: as given, stripped, without a
    ``Bearer`` prefix, and base64-encoded (as SMTP AUTH LOGIN sends a password). Longest first, so a
    form containing another is replaced whole."""
    forms: set[str] = set()
    for secret in secrets:
        bare = _AUTH_SCHEME.sub("", secret.strip()).strip()
        for form in (secret, secret.strip(), bare):
            if len(form) >= 4:  # a 1-3 character "secret" would blank out ordinary text
                forms.add(form)
                forms.add(base64.b64encode(form.encode()).decode())
    return tuple(sorted(forms, key=lambda f: (-len(f), f)))


def redact_url(url: str) -> str:
    """``url`` with a password in it (``http://user:pass@proxy``) and sensitive query values replaced
    by ``***`` (for messages, sidecars and the run's source)."""
    parts = urlsplit(url)
    if "@" in parts.netloc:
        user, _, host = parts.netloc.rpartition("@")
        user = user.split(":", 1)[0] + ":" + REDACTED if ":" in user else user
        parts = parts._replace(netloc=f"{user}@{host}")
    if not parts.query:
        return urlunsplit(parts)
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
        self.secrets = secret_forms(secrets)
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ScrapeError(f"cannot create the raw folder {folder}: {exc.strerror}") from None
        if self.folder.is_symlink() or not self.folder.is_dir():
            raise ScrapeError(f"the raw folder {folder} is a symbolic link or not a folder: refused")
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
        content = resp.content[:MAX_RESPONSE_BYTES]
        for secret in self.secrets:
            content = content.replace(secret.encode(), REDACTED.encode())
        write_new(self.folder / f"{stem}.body", content)
        write_new(self.folder / f"{stem}.json", text.encode("utf-8"))
        return self.folder / f"{stem}.json"


def write_new(path: Path, content: bytes) -> None:
    """Create ``path`` and write ``content``; a file or link already there is a ScrapeError (a link
    planted under a predictable name is never written through)."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    except OSError as exc:
        raise ScrapeError(f"cannot save {path}: {exc.strerror} (not overwritten)") from None
    with os.fdopen(fd, "wb") as fh:
        fh.write(content)


def read_regular(path: Path, limit: int) -> bytes:
    """The bytes of ``path`` if it is a regular file (not a link, device or FIFO) of at most ``limit``
    bytes; a ScrapeError otherwise."""
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC  # NONBLOCK: a FIFO must not hang us
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        reason = "a symbolic link" if exc.errno == errno.ELOOP else exc.strerror
        raise ScrapeError(f"{path.name} refused: {reason}") from None
    with os.fdopen(fd, "rb") as fh:
        info = os.fstat(fh.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise ScrapeError(f"{path.name} refused: not a regular file")
        if info.st_size > limit:
            raise ScrapeError(f"{path.name} refused: {info.st_size} bytes, more than {limit}")
        data = fh.read(limit + 1)
    if len(data) > limit:
        raise ScrapeError(f"{path.name} refused: more than {limit} bytes")
    return data


class Replayer:
    """Serves recorded responses for one provider's folder; an unknown request is a ScrapeError."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._by_key: dict[str, list[tuple[int, dict[str, str], Path]]] = defaultdict(list)
        self._served: dict[str, int] = defaultdict(int)
        if folder.is_symlink():
            raise ScrapeError(f"the recorded folder {folder} is a symbolic link: refused")
        for sidecar in sorted(folder.glob("*.json")) if folder.is_dir() else []:
            text = read_regular(sidecar, MAX_SIDECAR_BYTES)
            try:
                meta = json.loads(text.decode("utf-8"))
                entry = (int(meta["status"]), dict(meta.get("headers") or {}), sidecar.with_suffix(".body"))
                self._by_key[str(meta["match_key"])].append(entry)
            except (ValueError, KeyError, TypeError, OverflowError, RecursionError, AttributeError) as exc:
                raise ScrapeError(f"unreadable recording {sidecar.name}: {exc}") from None

    def serve(self, method: str, url: str, body: bytes) -> HttpResponse:
        key = match_key(method, url, body)
        entries = self._by_key.get(key)
        if not entries:
            raise ScrapeError(f"no recorded response for {method} {redact_url(url)} in {self.folder}")
        index = min(self._served[key], len(entries) - 1)
        self._served[key] += 1
        status, headers, path = entries[index]
        if not path.exists() and not path.is_symlink():
            raise ScrapeError(f"recorded body {path.name} missing")
        content = read_regular(path, MAX_RESPONSE_BYTES)
        return HttpResponse(status, url, headers, content)
