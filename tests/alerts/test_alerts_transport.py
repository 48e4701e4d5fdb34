"""The webhooks' transport: a redirect is never followed (a 302 would turn the POST into a GET without
the message and the alert would read as sent; a 307 would post it to another host); https only, but
for this machine or a channel that opts in; one deadline per attempt and a budget per message, so a
robot host dripping its answer costs seconds, not 301 s an attempt; each failure named for what it
was (refused, timeout, the deadline, a redirect), never the URL."""

from __future__ import annotations

import contextlib
import http.server
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from planner.alerts.channels import deliver
from planner.alerts.channels.base import Channel, SendPolicy
from planner.alerts.rules import load_channels
from planner.config import Config, load_config
from planner.errors import ConfigError
from tests.helpers.alerts import WECOM_KEY
from tests.helpers.servers import dripping_server

POLICY = SendPolicy(attempts=3, backoff_s=0.01, connect_timeout_s=2, read_timeout_s=5, deadline_s=0.5)


@contextlib.contextmanager
def answering(status: int, location: str = "") -> Iterator[tuple[str, list[tuple[str, str]]]]:
    """A loopback host answering every request with ``status`` (and ``Location``); yields its base URL
    and the (method, path) of each request it got."""
    seen: list[tuple[str, str]] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def answer(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            seen.append((self.command, self.path))
            body = b'{"errcode": 0, "errmsg": "ok"}'
            self.send_response(status)
            if location:
                self.send_header("Location", location)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        do_GET = do_POST = answer

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True  # a kept-alive connection's handler is not waited for
    threading.Thread(target=server.serve_forever, args=(0.01,), daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", seen
    finally:
        server.shutdown()
        server.server_close()


def _send(url: str, channel: Channel | None = None, policy: SendPolicy = POLICY, **kw: Any):
    return deliver(
        channel or Channel("WE", "wecom"),
        "planner: 1 GPU alert(s)",
        "### planner: 1 GPU alert(s)",
        config=load_config(env={}),
        env={"PLANNER_WEBHOOK_WE": url},
        sleep=lambda s: None,
        policy=policy,
        alerts=1,
        **kw,
    )


@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
def test_a_redirect_is_not_followed_and_the_alert_is_not_recorded_as_sent(status):
    with answering(200) as (elsewhere, other_host), answering(status, f"{elsewhere}/hook") as (base, seen):
        delivery = _send(f"{base}/cgi-bin/webhook/send?key={WECOM_KEY}")
    assert not delivery.ok and delivery.attempts == 1  # not retried: it will redirect again
    assert f"HTTP {status}, a redirect to 127.0.0.1: not followed" in delivery.error, delivery.error
    assert "PLANNER_WEBHOOK_WE" in delivery.error and WECOM_KEY not in delivery.error
    assert seen == [("POST", f"/cgi-bin/webhook/send?key={WECOM_KEY}")]  # one POST, no GET after it
    assert other_host == []  # the message never reached the host the redirect named


@pytest.mark.parametrize("host", ["203.0.113.7", "hooks.example.com"])
def test_plain_http_to_another_machine_is_refused_unless_the_channel_opts_in(host):
    posted: list[str] = []

    def post(url: str, body: bytes, connect_s: float, read_s: float) -> tuple[int, bytes]:
        posted.append(url)
        return 200, b'{"errcode": 0, "errmsg": "ok"}'

    url = f"http://{host}/cgi-bin/webhook/send?key={WECOM_KEY}"
    refused = _send(url, post=post)
    assert not refused.ok and refused.attempts == 0 and posted == []
    assert f"PLANNER_WEBHOOK_WE is plain http to {host}" in refused.error
    assert "allow_plain_http = true" in refused.error and WECOM_KEY not in refused.error
    allowed = _send(url, Channel("WE", "wecom", allow_plain_http=True), post=post)
    assert allowed.ok and posted == [url]
    assert _send(url.replace("http://", "https://"), post=post).ok  # https is always fine


def test_a_channel_opts_into_plain_http_in_its_table_and_only_with_true_or_false():
    def channels(table: dict[str, Any]) -> dict[str, Channel]:
        return load_channels(Config(data={**load_config(env={}).data, "channels": {"hook": table}}))

    assert channels({"kind": "feishu", "allow_plain_http": True})["hook"].allow_plain_http
    assert not channels({"kind": "feishu"})["hook"].allow_plain_http
    with pytest.raises(ConfigError, match="allow_plain_http must be true or false"):
        channels({"kind": "dingtalk", "allow_plain_http": "yes"})
    with pytest.raises(ConfigError):  # an e-mail channel has no URL to weaken
        channels({"kind": "email", "allow_plain_http": True})


@pytest.mark.parametrize(
    "start",
    [b"HTTP/1.1 200 O", b"HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n{"],
    ids=["status-line", "body"],
)
def test_a_dripping_robot_host_costs_one_deadline_an_attempt_within_the_budget(start):
    with dripping_server(start) as base:
        started = time.monotonic()
        delivery = _send(f"{base}/cgi-bin/webhook/send?key={WECOM_KEY}", policy=POLICY)
        took = time.monotonic() - started
    assert not delivery.ok and delivery.attempts == 3
    assert "no whole answer within 0.5 s" in delivery.error, delivery.error
    assert took < 3 * 0.5 + 1.0
    budget = SendPolicy(attempts=4, backoff_s=0.01, deadline_s=0.5, budget_s=0.8)
    with dripping_server(start) as base:
        started = time.monotonic()
        delivery = _send(f"{base}/cgi-bin/webhook/send?key={WECOM_KEY}", policy=budget)
        took = time.monotonic() - started
    assert not delivery.ok and delivery.attempts < 4 and took < 0.8 + 0.5, (delivery, took)
    assert "the budget of one message" in delivery.error, delivery.error


def test_each_failure_is_named_for_what_it_was():
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    refused = _send(f"http://127.0.0.1:{port}/cgi-bin/webhook/send?key={WECOM_KEY}")
    assert "refused: nothing accepted the connection" in refused.error, refused.error
    with dripping_server() as base:
        dripped = _send(f"{base}/cgi-bin/webhook/send?key={WECOM_KEY}")
    assert "deadline: no whole answer" in dripped.error, dripped.error
    with answering(302, "https://elsewhere.example/") as (base, _):
        moved = _send(f"{base}/cgi-bin/webhook/send?key={WECOM_KEY}")
    assert "a redirect to elsewhere.example" in moved.error, moved.error
    errors = [refused.error, dripped.error, moved.error]
    assert len(set(errors)) == 3 and not any("no answer" in e for e in errors)
    assert not any(WECOM_KEY in e for e in errors)
