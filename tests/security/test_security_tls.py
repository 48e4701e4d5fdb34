"""TLS verification is on for every provider request and cannot be turned off silently.

A real TLS server on loopback with a certificate nobody trusts: every provider's client refuses it,
whatever the environment says (``CURL_CA_BUNDLE=""``, ``PYTHONHTTPSVERIFY=0``) and even when someone
sets ``session.verify = False``; trusting the certificate explicitly (``REQUESTS_CA_BUNDLE``, the
documented way for a company CA) makes the same request work, so the refusal was the verification.
A redirect from https to plain http is refused before anything is sent in the clear. And no module
talks HTTP except through ``scrapers/http.py``, nor turns verification off anywhere.
"""

from __future__ import annotations

import ast
import http.server
import ssl
import threading
from pathlib import Path
from typing import Any

import pytest

from scrapers.base import ScrapeError
from scrapers.http import HttpClient, HttpPolicy
from scrapers.registry import PROVIDERS, ProviderSettings, collect, make_client
from tests.helpers.source import nodes

ROOT = Path(__file__).resolve().parents[2]


class Server:
    """A loopback HTTP(S) server answering every request with ``answer(handler)``; records the paths."""

    def __init__(self, answer: Any, context: ssl.SSLContext | None = None):
        self.paths: list[str] = []
        owner = self

        class Handler(http.server.BaseHTTPRequestHandler):
            disable_nagle_algorithm = True  # headers and body leave at once (no 40 ms delayed-ACK stall)

            def do_GET(self) -> None:
                owner.paths.append(self.path)
                answer(self)

            do_POST = do_GET

            def log_message(self, *args: Any) -> None:
                pass

        class Quiet(http.server.ThreadingHTTPServer):
            daemon_threads = True

            def handle_error(self, request: Any, client_address: Any) -> None:
                pass  # a client that refuses our certificate hangs up mid-handshake

        self.server = Quiet(("127.0.0.1", 0), Handler)
        if context:
            self.server.socket = context.wrap_socket(self.server.socket, server_side=True)
        self.scheme = "https" if context else "http"
        threading.Thread(target=self.server.serve_forever, args=(0.01,), daemon=True).start()

    @property
    def url(self) -> str:
        return f"{self.scheme}://127.0.0.1:{self.server.server_port}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def _json(handler: http.server.BaseHTTPRequestHandler) -> None:
    handler.send_response(200)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", "2")
    handler.end_headers()
    handler.wfile.write(b"{}")


@pytest.fixture
def tls_server(certificate):  # noqa: F811
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(*map(str, certificate))
    server = Server(_json, context)
    yield server
    server.close()


def _client(provider: str, base_url: str) -> HttpClient:
    return HttpClient(
        provider, version="0", base_url=base_url, policy=HttpPolicy(max_retries=0, min_interval_s=0)
    )


@pytest.mark.parametrize("provider", list(PROVIDERS))
def test_every_provider_refuses_a_certificate_nobody_trusts(tls_server, monkeypatch, provider):
    for variable in ("REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "SSL_CERT_FILE"):
        monkeypatch.delenv(variable, raising=False)
    cls = PROVIDERS[provider]
    # Credentials (fake) so that a provider that reads nothing without a key (PPIO) connects too.
    settings = ProviderSettings(base_url=tls_server.url, credentials={v: "x" for v in cls.credential_env})
    scraper = cls()
    result = collect(
        scraper,
        make_client(cls, settings, version="0", policy=HttpPolicy(max_retries=0, min_interval_s=0)),
        settings,
    )
    assert result.status == "failed" and "SSLError" in (result.error or ""), result.error
    assert result.offers == []


@pytest.mark.parametrize(
    "environment",
    [
        {"CURL_CA_BUNDLE": ""},
        {"REQUESTS_CA_BUNDLE": ""},
        {"PYTHONHTTPSVERIFY": "0"},
    ],
)
def test_the_environment_cannot_turn_verification_off(tls_server, monkeypatch, environment):
    for variable in ("REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "SSL_CERT_FILE"):
        monkeypatch.delenv(variable, raising=False)
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    with pytest.raises(ScrapeError, match="SSLError"):
        _client("tencent", tls_server.url).get("https://cvm.tencentcloudapi.com/")


def test_code_that_sets_session_verify_false_still_verifies(tls_server, monkeypatch):
    for variable in ("REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE"):  # these would otherwise mask session.verify
        monkeypatch.delenv(variable, raising=False)
    client = _client("aliyun", tls_server.url)
    client.session.verify = False  # a careless change somewhere after the client was made
    with pytest.raises(ScrapeError, match="SSLError"):
        client.get("https://ecs.aliyuncs.com/")
    given_session = __import__("requests").Session()
    given_session.verify = False
    client = HttpClient("aliyun", version="0", base_url=tls_server.url, session=given_session)
    assert client.session.verify is True


def test_trusting_the_certificate_explicitly_works(tls_server, certificate, monkeypatch):  # noqa: F811
    """The refusals above are the verification: with the certificate trusted, the same call succeeds."""
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", str(certificate[0]))
    assert _client("tencent", tls_server.url).get("https://cvm.tencentcloudapi.com/").json() == {}
    assert tls_server.paths == ["/"]


def test_a_redirect_from_https_to_plain_http_is_refused(certificate, monkeypatch):  # noqa: F811
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", str(certificate[0]))
    plain = Server(_json)

    def redirect(handler: http.server.BaseHTTPRequestHandler) -> None:
        handler.send_response(302)
        handler.send_header("Location", f"{plain.url}/login")
        handler.send_header("Content-Length", "0")
        handler.end_headers()

    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(*map(str, certificate))
    secure = Server(redirect, context)
    try:
        with pytest.raises(ScrapeError, match="which is not https: refused"):
            _client("autodl", secure.url).get("https://www.autodl.com/api/v1/machine/gpu_type")
    finally:
        secure.close()
        plain.close()
    assert secure.paths == ["/api/v1/machine/gpu_type"] and plain.paths == []  # nothing went out in the clear


def test_every_request_passes_verify_true_itself(tls_server, certificate, monkeypatch):  # noqa: F811
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", str(certificate[0]))
    client = _client("volcengine", tls_server.url)
    seen: list[dict[str, Any]] = []
    original = client.session.request

    def spy(*args: Any, **kwargs: Any) -> Any:
        seen.append(kwargs)
        return original(*args, **kwargs)

    monkeypatch.setattr(client.session, "request", spy)
    client.get("https://open.volcengineapi.com/")
    client.post("https://open.volcengineapi.com/", json_body={})
    assert [k.get("verify") for k in seen] == [True, True]


def _python_files() -> list[Path]:
    return sorted(
        p for package in ("planner", "db", "reports", "scrapers") for p in (ROOT / package).rglob("*.py")
    )


def test_only_the_http_client_talks_http_and_nothing_disables_verification():
    talkers = {"requests", "urllib.request", "http.client", "httpx", "aiohttp", "urllib3"}
    for path in _python_files():
        relative = str(path.relative_to(ROOT))
        for node in nodes(path):
            if isinstance(node, ast.Import | ast.ImportFrom):
                names = {a.name for a in node.names} | {getattr(node, "module", None) or ""}
                if names & talkers:
                    # deadline.py: the connection classes under http.py's session (it sends nothing itself)
                    assert relative in ("scrapers/http.py", "scrapers/deadline.py"), (
                        f"{relative}:{node.lineno} imports {names & talkers}"
                    )
            if isinstance(node, ast.keyword) and node.arg in ("verify", "check_hostname"):
                assert not (isinstance(node.value, ast.Constant) and node.value.value is False), (
                    f"{relative}:{node.lineno}"
                )
            if isinstance(node, ast.Attribute) and node.attr in ("CERT_NONE", "_create_unverified_context"):
                raise AssertionError(f"{relative}:{node.lineno} uses ssl.{node.attr}")
            if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Attribute) and t.attr in ("verify", "check_hostname") for t in node.targets
            ):
                assert isinstance(node.value, ast.Constant) and node.value.value is True, (
                    f"{relative}:{node.lineno}"
                )
