"""HttpClient: timeouts, retries and backoff, Retry-After, politeness, base_url, errors without secrets."""

from __future__ import annotations

import time
from dataclasses import replace

import pytest
import requests
import responses
from responses import matchers

from scrapers.base import ScrapeError
from scrapers.http import HttpClient, HttpPolicy, TransportError, parse_retry_after_s
from tests.helpers.servers import dripping_server

URL = "https://cvm.tencentcloudapi.com/"


def test_user_agent_names_planner_and_version(rsps, make_client):
    rsps.get(URL, json={"ok": 1})
    make_client().get(URL)
    assert rsps.calls[0].request.headers["User-Agent"] == "planner/9.9.9 (+GPU price planner)"


def test_timeouts_from_policy_are_passed(rsps, make_client, monkeypatch):
    seen = {}
    client = make_client(policy=HttpPolicy(connect_timeout_s=3, read_timeout_s=7, min_interval_s=0))
    original = client.session.request

    def spy(*args, **kwargs):
        seen.update(kwargs)
        return original(*args, **kwargs)

    monkeypatch.setattr(client.session, "request", spy)
    rsps.get(URL, json={})
    client.get(URL)
    assert seen["timeout"] == (3, 7)
    assert client.session.verify is True


def test_retries_5xx_with_exponential_backoff_then_succeeds(rsps, make_client, clock):
    rsps.get(URL, status=500)
    rsps.get(URL, status=503)
    rsps.get(URL, json={"fine": True})
    resp = make_client().get(URL)
    assert resp.json() == {"fine": True}
    assert len(rsps.calls) == 3
    assert clock.sleeps == [1.0, 2.0]


def test_gives_up_after_max_retries_naming_url_and_status(rsps, make_client, clock):
    for _ in range(4):
        rsps.get(URL, status=502, body="bad gateway")
    with pytest.raises(ScrapeError, match=r"GET https://cvm.tencentcloudapi.com/ returned HTTP 502 after 4"):
        make_client().get(URL)
    assert len(rsps.calls) == 4
    assert clock.sleeps == [1.0, 2.0, 4.0]


def test_429_honours_retry_after_and_caps_it(rsps, make_client, clock):
    rsps.get(URL, status=429, headers={"Retry-After": "7"})
    rsps.get(URL, status=429, headers={"Retry-After": "3600"})
    rsps.get(URL, json={})
    make_client(policy=HttpPolicy(min_interval_s=0, retry_after_max_s=60)).get(URL)
    assert clock.sleeps == [7.0, 60.0]


def test_retry_after_http_date():
    assert parse_retry_after_s("Wed, 21 Oct 2015 07:28:10 GMT", 1445412480.0) == pytest.approx(10.0)
    assert parse_retry_after_s("soon", 0) == 1.0


def test_connection_errors_are_retried_then_reported(rsps, make_client, clock):
    rsps.get(URL, body=requests.ConnectionError("boom"))
    rsps.get(URL, body=requests.ConnectTimeout("slow"))
    rsps.get(URL, json={"ok": 1})
    assert make_client().get(URL).json() == {"ok": 1}
    assert clock.sleeps == [1.0, 2.0]
    for _ in range(4):
        rsps.get(URL, body=requests.ReadTimeout("slow"))
    with pytest.raises(ScrapeError, match="failed after 4 attempts: timeout: connected, but no answer"):
        make_client().get(URL)


def test_client_error_is_not_retried(rsps, make_client, clock):
    rsps.get(URL, status=404, body="<html>not here</html>")
    with pytest.raises(ScrapeError, match=r"HTTP 404: <html>not here"):
        make_client().get(URL)
    assert len(rsps.calls) == 1 and clock.sleeps == []


def test_retry_if_hook_retries_a_200_throttle(rsps, make_client, clock):
    rsps.post(URL, json={"Response": {"Error": {"Code": "RequestLimitExceeded"}}})
    rsps.post(URL, json={"Response": {"ok": 1}})
    resp = make_client().post(URL, json_body={}, retry_if=lambda r: b"RequestLimitExceeded" in r.content)
    assert resp.json() == {"Response": {"ok": 1}}
    assert clock.sleeps == [1.0]


def test_polite_minimum_interval_between_requests(rsps, make_client, clock):
    rsps.get(URL, json={})
    client = make_client(policy=HttpPolicy(min_interval_s=0.5))
    for _ in range(3):
        client.get(URL)
    assert clock.sleeps == [0.5, 0.5]


def test_base_url_replaces_scheme_and_host_of_every_request(rsps, make_client):
    rsps.post(
        "http://127.0.0.1:8080/mirror/cgi/api", json={}, match=[matchers.query_param_matcher({"a": "1"})]
    )
    rsps.get("http://127.0.0.1:8080/mirror/price/x.json", json={})
    client = make_client(base_url="http://127.0.0.1:8080/mirror/")
    client.post("https://workbench.cloud.tencent.com/cgi/api", params={"a": "1"}, json_body={"k": 1})
    client.get("https://g.alicdn.com/price/x.json")
    assert [c.request.url for c in rsps.calls] == [
        "http://127.0.0.1:8080/mirror/cgi/api?a=1",
        "http://127.0.0.1:8080/mirror/price/x.json",
    ]


def test_signer_sees_logical_url_and_runs_per_attempt(rsps, make_client):
    seen = []

    def signer(method, url, headers, body):
        seen.append(url)
        return {"Authorization": f"sig-{len(seen)}"}

    rsps.post("http://localhost:9/", status=500)
    rsps.post("http://localhost:9/", json={})
    make_client(base_url="http://localhost:9").post(URL, json_body={"x": 1}, signer=signer)
    assert seen == [URL, URL]
    assert [c.request.headers["Authorization"] for c in rsps.calls] == ["sig-1", "sig-2"]
    assert rsps.calls[0].request.headers["Content-Type"] == "application/json; charset=utf-8"


def test_errors_never_contain_the_secret(rsps, make_client):
    secret = "SuperSecretKey123"
    rsps.get(URL, status=403, body=f'{{"Message": "bad key {secret}"}}')
    with pytest.raises(ScrapeError) as info:
        make_client(secrets=[secret]).get(URL, params={"Signature": "abc", "Region": "x"})
    text = str(info.value)
    assert secret not in text and "abc" not in text
    assert "Signature=%2A%2A%2A" in text and "Region=x" in text and info.value.__cause__ is None


def test_html_instead_of_json_is_a_scrape_error(rsps, make_client):
    rsps.get(URL, body="<!doctype html><title>登录</title>", content_type="text/html")
    with pytest.raises(ScrapeError, match="did not return JSON"):
        make_client().get(URL).json()


def test_bad_base_url_and_provider_name_are_refused(make_client):
    with pytest.raises(ScrapeError, match="base_url"):
        make_client(base_url="ftp://mirror")
    with pytest.raises(ValueError):
        make_client(provider="../etc")


@responses.activate
def test_no_network_without_mock(make_client):
    # responses.activate with nothing registered: any real request would be refused, proving isolation.
    with pytest.raises(ScrapeError):
        make_client(policy=HttpPolicy(max_retries=0, min_interval_s=0)).get("https://example.invalid/")


# --- a network failure names its root cause and the URL actually requested ---------------------------


def _loopback_server(behaviour):
    """A TCP server on 127.0.0.1 doing ``behaviour(conn)`` with each connection; returns (port, stop)."""
    import socket
    import threading

    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    server.settimeout(5)
    stop = threading.Event()

    def serve():
        held = []
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except OSError:
                break
            held.append(conn)
            behaviour(conn)
        for conn in held:
            conn.close()

    threading.Thread(target=serve, daemon=True).start()

    def close():
        stop.set()
        server.close()

    return server.getsockname()[1], close


def _closed_port() -> int:
    import socket

    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()  # nothing listens there now
    return port


FAST = HttpPolicy(max_retries=1, min_interval_s=0, connect_timeout_s=2, read_timeout_s=0.3)


def test_refused_names_the_mirror_url_not_the_real_host(make_client):
    mirror = f"http://127.0.0.1:{_closed_port()}/mirror"
    client = make_client(base_url=mirror, policy=FAST)
    with pytest.raises(ScrapeError) as err:
        client.get("https://cvm.tencentcloudapi.com/?Action=X")
    text = str(err.value)
    assert f"GET {mirror}/?Action=X " in text and "after 2 attempts" in text and "refused" in text
    assert "cvm.tencentcloudapi.com" not in text


def test_tls_failure_is_named_tls(make_client):
    port, close = _loopback_server(lambda conn: conn.sendall(b"HTTP/1.1 200 OK\r\n\r\nplain text, not TLS"))
    try:
        client = make_client(base_url=f"https://127.0.0.1:{port}", policy=FAST)  # the backoff: fake clock
        with pytest.raises(ScrapeError, match=rf"GET https://127.0.0.1:{port}/ failed after 2 attempts: TLS"):
            client.get("https://cvm.tencentcloudapi.com/")
    finally:
        close()


def test_read_timeout_is_named_timeout(make_client):
    port, close = _loopback_server(lambda conn: None)  # accepts, never answers
    try:
        # the server never answers: the read timeout needs no margin
        policy = replace(FAST, read_timeout_s=0.05)
        client = make_client("aliyun", base_url=f"http://127.0.0.1:{port}", policy=policy)  # fake backoff
        with pytest.raises(ScrapeError, match="timeout: connected, but no answer within the read timeout"):
            client.get("https://ecs.aliyuncs.com/")
    finally:
        close()


def test_dns_failure_is_named_dns(rsps, make_client):
    import socket

    from urllib3.exceptions import MaxRetryError, NameResolutionError

    resolution = NameResolutionError(
        "ecs.aliyuncs.com", None, socket.gaierror(-2, "Name or service not known")
    )
    for _ in range(2):
        rsps.get(URL, body=requests.ConnectionError(MaxRetryError(None, URL, resolution)))
    with pytest.raises(
        ScrapeError, match="failed after 2 attempts: DNS: the host name could not be resolved"
    ):
        make_client(policy=FAST).get(URL)


@pytest.mark.parametrize(
    ("exc", "cause"),
    [
        (requests.ConnectionError(ConnectionRefusedError(111, "Connection refused")), "refused"),
        (requests.ConnectionError(ConnectionResetError(104, "Connection reset by peer")), "reset"),
        (requests.exceptions.SSLError("certificate verify failed"), "TLS"),
        (requests.ConnectTimeout("slow"), "timeout: no connection"),
        (requests.ConnectionError("something else"), "connection: "),
    ],
)
def test_network_cause_classifies(exc, cause):
    from scrapers.http import network_cause

    assert network_cause(exc).startswith(cause)


def test_verbose_log_lists_each_request_without_secrets(rsps, make_client):
    lines = []
    rsps.get(URL, status=500, body="x" * 10)
    rsps.get(URL, json={"ok": 1})
    client = make_client(request_log=lines.append, secrets=("s3cr3t-token",))
    client.get(URL, params={"Signature": "abc", "Token": "s3cr3t-token", "Action": "Describe"})
    assert len(lines) == 2
    first, second = lines
    assert first.startswith("tencent: GET https://cvm.tencentcloudapi.com/?Signature=%2A%2A%2A")
    assert "Action=Describe" in first and "-> HTTP 500, 10 bytes," in first and first.endswith(" s")
    assert "-> HTTP 200, 9 bytes" in second
    assert not any("s3cr3t-token" in line or "abc" in line for line in lines)


def test_a_refused_bomb_keeps_none_of_its_bytes_in_the_error(make_client):
    """The error of a refused gzip bomb references the reading frame (its traceback); the pieces read
    are dropped before it is raised, so a caller that keeps one error per region keeps no megabytes."""
    import gzip

    from tests.helpers.servers import http_server

    bomb = gzip.compress(bytes(4 * 2**20))  # 4 MB of zeros, a few KB on the wire
    policy = HttpPolicy(max_retries=0, min_interval_s=0, max_body_bytes=2**20)
    with http_server(bomb, {"Content-Encoding": "gzip", "Content-Type": "application/json"}) as base:
        with pytest.raises(ScrapeError, match=r"answered more than 1 MB \(decoded\): refused") as caught:
            make_client("aliyun", base_url=base, policy=policy).get("https://ecs.aliyuncs.com/")
    held = 0
    traceback = caught.value.__traceback__
    while traceback is not None:
        held += sum(len(c) for c in traceback.tb_frame.f_locals.get("chunks", ()))
        traceback = traceback.tb_next
    assert held == 0


def test_a_status_line_dripped_a_byte_at_a_time_ends_at_the_exchange_deadline():
    """``HTTP/1.1 200 O`` and then a byte every 50 ms: every byte resets a read timeout, so only one
    deadline over the whole exchange (connect, status line, headers, body) ends it; not retried."""
    with dripping_server() as base:
        client = HttpClient(
            "tencent",
            version="t",
            base_url=base,
            policy=HttpPolicy(max_retries=3, read_timeout_s=5, deadline_s=0.3, min_interval_s=0),
        )
        started = time.monotonic()
        with pytest.raises(TransportError) as caught:
            client.get("https://cvm.tencentcloudapi.com/prices")
    assert time.monotonic() - started < 1.5
    assert caught.value.cause.startswith("deadline: no whole answer within 0.3 s")


def test_abandoning_a_job_cuts_its_exchanges_and_refuses_its_later_ones_only():
    """The scheduler abandons a run: that run's exchange (in a thread it started in a copy of its
    context, as the refresh starts a provider) ends at once, and so does any it starts later; an
    exchange of anyone else goes on to its own deadline."""
    import contextvars
    import threading

    from scrapers.deadline import Job
    from tests.helpers.servers import http_server

    def client(deadline_s: float, base: str) -> HttpClient:
        policy = HttpPolicy(max_retries=0, read_timeout_s=5, deadline_s=deadline_s, min_interval_s=0)
        return HttpClient("tencent", version="t", base_url=base, policy=policy)

    ended: dict[str, tuple[float, str]] = {}

    def fetch(name: str, deadline_s: float, base: str) -> None:
        started = time.monotonic()
        try:
            client(deadline_s, base).get("https://cvm.tencentcloudapi.com/prices")
            ended[name] = (time.monotonic() - started, "answered")
        except TransportError as err:
            ended[name] = (time.monotonic() - started, err.cause)

    job = Job()
    with dripping_server() as base:
        mine = threading.Thread(
            target=job.run,
            args=(
                lambda: threading.Thread(
                    target=contextvars.copy_context().run, args=(fetch, "job", 30, base)
                ).start(),
            ),
        )
        other = threading.Thread(target=fetch, args=("other", 1.0, base))
        mine.start(), other.start()
        time.sleep(0.3)
        assert job.abandon() == 1
        deadline = time.monotonic() + 5
        while len(ended) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
    assert ended["job"][1] == "deadline: cut short, the job it ran for was abandoned" and ended["job"][0] < 1
    assert ended["other"][1].startswith("deadline: no whole answer within 1 s") and ended["other"][0] >= 0.9
    with http_server(b"[]", {"Content-Type": "application/json"}) as base:
        job.run(lambda: fetch("later", 30, base))
        fetch("outside", 30, base)
    assert ended["later"][1].startswith("deadline: cut short") and ended["outside"][1] == "answered"
