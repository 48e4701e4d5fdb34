"""Secrets never leave the process: provider keys, the AutoDL token and the SMTP password are set to
recognisable values, every provider runs in account mode against a loopback server that echoes what
it is sent back into its answers and errors (placed so that a secret straddles the point where an error
snippet is cut), and then everything a night writes is scanned: standard output and error of every
command, the log file, the ``--save-raw`` folder, the report CSVs, the e-mail as delivered, and the
database (its bytes on SQLite, every row on PostgreSQL).

A secret counts as leaked if any ten consecutive characters of it show up, so a half-cut token is a
leak too.
"""

from __future__ import annotations

import http.server
import json
import threading
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from aiosmtpd.smtp import AuthResult, LoginPassword
from sqlalchemy import MetaData, create_engine, select

from scrapers.base import ScrapeError
from scrapers.recording import Replayer
from tests.helpers.replay import RAW
from tests.helpers.smtp import Recorder, server_context, smtp_server

SECRETS = {
    "ALIBABA_CLOUD_ACCESS_KEY_ID": "LTAI5tQx7Jm2Rk9WvN3pZa",
    "ALIBABA_CLOUD_ACCESS_KEY_SECRET": "Hq8sV2nLc4XyT7bE1rKp9MdW3zFu6G",
    "TENCENTCLOUD_SECRET_ID": "AKIDz8krbsJ5yKBZQpn74WFkmLPx3EXAMPL",
    "TENCENTCLOUD_SECRET_KEY": "Gu5t9xGARNpq86cd98joQYCN3EXAMPLEk",
    "VOLCENGINE_ACCESS_KEY": "AKLTMjI2ODVlYzI3ZGY1NDU5ZmE3Nz",
    "VOLCENGINE_SECRET_KEY": "TVRJeU1qVmhaV0UwWWpnME5HRmpZMk0=",
    "AUTODL_TOKEN": "eyJhbGciOiJIUzI1NiJ9.eyJ1aWQiOjQyfQ.Zm9vYmFyYmF6cXV4",
    "PLANNER_SMTP_PASSWORD": "Smtp-Pa55word-9f3K2q",
}
WINDOW = 10  # this many consecutive characters of a secret anywhere is a leak
SNIPPET_CUT = 160  # where scrapers/http.py cuts an error body (a secret straddling it must not survive)


def leaks(text: str) -> list[str]:
    """The names of the secrets of which some WINDOW-long piece (or its URL-encoding) is in ``text``."""
    found = []
    for name, secret in SECRETS.items():
        pieces = {secret[i : i + WINDOW] for i in range(len(secret) - WINDOW + 1)}
        pieces |= {quote(secret, safe="")}
        if any(piece in text for piece in pieces):
            found.append(name)
    return found


class EchoServer:
    """Answers the recorded public requests as recorded, so every flow reaches its signed calls; any
    request carrying an Authorization header is answered with that header echoed back, alternately as
    a 403 whose text puts the secret across the snippet cut, and as a 200 JSON body."""

    def __init__(self) -> None:
        self.replayers = {p.name: Replayer(p) for p in RAW.iterdir() if p.is_dir()}
        self.hosts = sorted(
            {json.loads(s.read_text(encoding="utf-8"))["url"].split("/")[2] for s in RAW.glob("*/*.json")}
        )
        self.count = 0
        self.authorized: list[str] = []
        owner = self

        class Handler(http.server.BaseHTTPRequestHandler):
            disable_nagle_algorithm = True  # headers and body leave at once (no 40 ms delayed-ACK stall)
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                owner.answer(self, b"")

            def do_POST(self) -> None:
                owner.answer(self, self.rfile.read(int(self.headers.get("Content-Length") or 0)))

            def log_message(self, *args: Any) -> None:
                pass

        class Server(http.server.ThreadingHTTPServer):
            daemon_threads = True

        self.server = Server(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, args=(0.01,), daemon=True).start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_port}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def answer(self, handler: http.server.BaseHTTPRequestHandler, body: bytes) -> None:
        auth = handler.headers.get("Authorization")
        if auth:
            self.authorized.append(auth)
            self.count += 1
            at = min((auth.find(s) for s in SECRETS.values() if s in auth), default=0)
            if self.count % 3 != 0:
                # The secret starts WINDOW + 2 characters before the point where an error quotes no more
                # of the answer (160 for an HTTP error, 80 for a body that is not JSON): cut first and
                # scrub after, and a recognisable piece of it survives.
                status, cut = (403, SNIPPET_CUT) if self.count % 3 == 1 else (200, 80)
                pad = "." * max(0, cut - len("denied for ") - at - (WINDOW + 2))
                self.send(handler, status, f"{pad}denied for {auth} at {handler.path}".encode(), "text/plain")
            else:
                echo = {
                    "echo": dict(handler.headers),
                    "path": handler.path,
                    "body": body.decode("utf-8", "replace"),
                }
                self.send(handler, 200, json.dumps(echo).encode(), "application/json")
            return
        for replayer in self.replayers.values():
            for host in self.hosts:
                try:
                    resp = replayer.serve(handler.command, f"https://{host}{handler.path}", body)
                except ScrapeError:
                    continue
                self.send(
                    handler, resp.status, resp.content, resp.headers.get("content-type", "application/json")
                )
                return
        self.send(handler, 404, b"not found", "text/plain")

    @staticmethod
    def send(
        handler: http.server.BaseHTTPRequestHandler, status: int, body: bytes, content_type: str
    ) -> None:
        handler.send_response(status)
        handler.send_header("Content-Type", content_type)
        handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        handler.wfile.write(body)


@pytest.fixture
def echo_server():
    server = EchoServer()
    yield server
    server.close()


def authenticator(server, session, envelope, mechanism, auth_data):  # noqa: ANN001, ANN201 - aiosmtpd hook
    ok = auth_data == LoginPassword(b"planner", SECRETS["PLANNER_SMTP_PASSWORD"].encode())
    return AuthResult(success=ok, handled=False)


def night_config(tmp_path: Path, base_url: str, smtp_port: int) -> Path:
    lines = [
        "[http]",
        "retries = 0",
        "backoff_s = 0.0",
        "read_timeout_s = 5",
        "[schedule]",
        f"log_file = '{tmp_path / 'logs' / 'planner.log'}'",
        "email = true",
        "[report]",
        f"out_dir = '{tmp_path / 'nightly'}'",
        "[email]",
        "smtp_host = '127.0.0.1'",
        f"smtp_port = {smtp_port}",
        "starttls = true",
        "username = 'planner'",
        "sender = 'planner@example.com'",
        "recipients = ['ml@example.com']",
    ]
    for provider in ("aliyun", "tencent", "volcengine", "autodl"):
        lines += [f"[providers.{provider}]", f"base_url = '{base_url}'", "min_interval_s = 0.0"]
    # one region each is enough to reach every signed call (Aliyun asks for spot prices per instance type)
    lines[lines.index("[providers.aliyun]") + 1 : lines.index("[providers.aliyun]") + 1] = [
        "regions = ['cn-beijing']"
    ]
    lines[lines.index("[providers.tencent]") + 1 : lines.index("[providers.tencent]") + 1] = [
        "regions = ['ap-beijing']"
    ]
    path = tmp_path / "night.toml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def database_text(db_url: str) -> str:
    """Every row of every table, as text (and, for a SQLite file, its raw bytes with the WAL)."""
    engine = create_engine(db_url)
    metadata = MetaData()
    metadata.reflect(engine)
    parts = []
    with engine.connect() as conn:
        for table in metadata.sorted_tables:
            parts += [repr(tuple(row)) for row in conn.execute(select(table))]
    engine.dispose()
    if db_url.startswith("sqlite:///"):
        path = Path(db_url.removeprefix("sqlite:///"))
        for file in path.parent.glob(path.name + "*"):
            parts.append(file.read_bytes().decode("latin-1"))
    return "\n".join(parts)


@pytest.mark.parametrize(
    "db_url", ["sqlite", pytest.param("postgresql", marks=pytest.mark.slow)], indirect=True
)
def test_no_secret_reaches_output_logs_raw_files_reports_mail_or_the_database(
    run_cli,
    db_url,
    tmp_path,
    monkeypatch,
    echo_server,
    certificate,  # noqa: F811
):
    for name, value in SECRETS.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("SSL_CERT_FILE", str(certificate[0]))
    handler = Recorder()
    written: dict[str, str] = {}
    with smtp_server(
        handler, tls_context=server_context(certificate), require_starttls=True, authenticator=authenticator
    ) as port:
        config = str(night_config(tmp_path, echo_server.base_url, port))
        commands = {
            "refresh --save-raw": ["refresh", "--save-raw", str(tmp_path / "raw"), "--format", "json"],
            "runs": ["runs"],
            "runs json": ["runs", "--format", "json", "--limit", "100"],
            "providers": ["providers"],
            "providers json": ["providers", "--format", "json"],
            "prices": ["prices", "--format", "csv"],
            "report": ["report", "--out", str(tmp_path / "reports"), "--email", "ops@example.com"],
            "schedule": ["schedule", "--once"],
        }
        for label, args in commands.items():
            result = run_cli("--config", config, *args)
            assert "Traceback" not in result.output, (label, result.output)
            written[f"{label}: stdout"] = result.stdout
            written[f"{label}: stderr"] = result.stderr
    # the flows did reach the signed calls and sent every provider's credentials to the server
    sent = "\n".join(echo_server.authorized)
    for name in (
        "ALIBABA_CLOUD_ACCESS_KEY_ID",
        "TENCENTCLOUD_SECRET_ID",
        "VOLCENGINE_ACCESS_KEY",
        "AUTODL_TOKEN",
    ):
        assert SECRETS[name] in sent, f"{name} was never used: the test would prove nothing about it"
    assert len(handler.messages) == 2, "the report and the nightly job each sent one e-mail"
    files = [
        p
        for folder in ("raw", "reports", "nightly", "logs")
        for p in (tmp_path / folder).rglob("*")
        if p.is_file()
    ]
    assert any(p.suffix == ".body" for p in files) and any(p.suffix == ".csv" for p in files)
    assert any(p.name.startswith("planner.log") for p in files)
    for path in files:
        written[str(path.relative_to(tmp_path))] = path.read_bytes().decode("utf-8", "replace")
    for index, (_, _, raw) in enumerate(handler.messages):
        written[f"e-mail {index}"] = raw.decode("utf-8", "replace")
    written["database"] = database_text(db_url)
    leaked = {where: leaks(text) for where, text in written.items() if leaks(text)}
    assert not leaked, leaked
    # and the failures were reported, just without the secrets
    assert (
        "returned HTTP 403" in written["refresh --save-raw: stdout"] + written["refresh --save-raw: stderr"]
    )


@pytest.mark.parametrize("form", ["as given", "base64 as AUTH PLAIN sends it"])
def test_an_smtp_server_echoing_the_password_does_not_leak_it(
    run_cli,
    tmp_path,
    monkeypatch,
    certificate,  # noqa: F811
    form,
):
    import base64

    password = SECRETS["PLANNER_SMTP_PASSWORD"]
    echoed = password if form == "as given" else base64.b64encode(f"\0planner\0{password}".encode()).decode()
    monkeypatch.setenv("PLANNER_SMTP_PASSWORD", password)
    monkeypatch.setenv("SSL_CERT_FILE", str(certificate[0]))
    monkeypatch.setattr("reports.mail.pause", lambda s: None)

    def echoing(server, session, envelope, mechanism, auth_data):  # noqa: ANN001, ANN202
        return AuthResult(success=False, handled=False, message=f"535 5.7.8 password {echoed} rejected")

    with smtp_server(
        Recorder(), tls_context=server_context(certificate), require_starttls=True, authenticator=echoing
    ) as port:
        config = night_config(tmp_path, "http://127.0.0.1:9", port)
        result = run_cli(
            "--config", str(config), "report", "--out", str(tmp_path / "o"), "--email", "a@example.com"
        )
    assert result.exit_code == 1 and "refused the login" in result.stderr
    assert not leaks(result.output) and echoed not in result.output, result.output
    assert "password *** rejected" in result.stderr


def test_secret_forms_a_prefixed_token_is_scrubbed_as_it_is_sent(
    run_cli, db_url, tmp_path, monkeypatch, echo_server
):
    """AutoDL's token given as "Bearer X" with spaces is sent as X: X is what must never come back."""
    monkeypatch.setenv("AUTODL_TOKEN", f"  Bearer {SECRETS['AUTODL_TOKEN']}  ")
    config = str(night_config(tmp_path, echo_server.base_url, 9))
    written = {}
    for args in (
        ["refresh", "--provider", "autodl", "--save-raw", str(tmp_path / "raw")],
        ["runs", "--format", "json", "--limit", "100"],
    ):
        result = run_cli("--config", config, *args)
        written[" ".join(args[:1])] = result.output
    assert SECRETS["AUTODL_TOKEN"] in "\n".join(echo_server.authorized), "the token was never sent"
    for path in (tmp_path / "raw").rglob("*"):
        if path.is_file():
            written[path.name] = path.read_bytes().decode("utf-8", "replace")
    written["database"] = database_text(db_url)
    leaked = {where: leaks(text) for where, text in written.items() if leaks(text)}
    assert not leaked, leaked


def test_secret_forms_the_smtp_password_is_in_the_refresh_scrub_list(engine, tmp_path):
    from tests.helpers.replay import outcome, recordings, refresh, replay_copy

    password = SECRETS["PLANNER_SMTP_PASSWORD"]
    folder = replay_copy(tmp_path)
    body = recordings(folder, "tencent", "/cgi/api")[-1]
    body.write_text(f"<html>login {password} here</html>", encoding="utf-8")
    summary = refresh(
        engine, tmp_path, from_raw=folder, providers=["tencent"], env={"PLANNER_SMTP_PASSWORD": password}
    )
    tencent = outcome(summary, "tencent")
    assert "did not return JSON" in tencent.error and "***" in tencent.error
    assert not leaks(tencent.error) and not leaks(database_text(str(engine.url)))


def test_secret_forms_a_proxy_password_in_base_url_is_never_shown(run_cli, db_url, tmp_path):
    proxy_password = "Pr0xy-Secret-99zz"
    config = tmp_path / "proxy.toml"
    config.write_text(
        f"[http]\nretries = 0\nconnect_timeout_s = 1\n[providers.tencent]\nbase_url = 'http://ops:{proxy_password}@127.0.0.1:9'\n",
        encoding="utf-8",
    )
    outputs = [
        run_cli("--config", str(config), *args).output
        for args in (
            ["refresh", "--provider", "tencent"],
            ["providers"],
            ["providers", "--format", "json"],
            ["runs"],
        )
    ]
    assert "ops:***@127.0.0.1:9" in outputs[1]
    for text in [*outputs, database_text(db_url)]:
        assert proxy_password not in text


def test_secret_forms_a_database_password_with_an_unescaped_at_is_masked_whole(runner, tmp_path):
    from planner.cli import cli
    from planner.storage import display_url

    url = "postgresql+psycopg://bob:s3cr@t-pa55@127.0.0.1:1/planner"
    assert display_url(url) == "postgresql+psycopg://bob:***@127.0.0.1:1/planner"
    result = runner.invoke(cli, ["--db", url, "prices"])
    assert result.exit_code != 0 and "Traceback" not in result.output
    assert "s3cr" not in result.output and "pa55" not in result.output


@pytest.mark.parametrize(
    "query",
    ["?password=s3cr%40t-pa55", "?sslmode=disable&password=s3cr@t-pa55", "?PASSWORD=s3cr@t-pa55&x=1"],
)
def test_secret_forms_a_database_password_given_as_a_query_parameter_is_masked(runner, query):
    from planner.cli import cli
    from planner.storage import display_url

    url = f"postgresql+psycopg://bob@127.0.0.1:1/planner{query}"
    assert "s3cr" not in display_url(url) and "password=***" in display_url(url).lower()
    result = runner.invoke(cli, ["--db", url, "prices"])
    assert result.exit_code != 0 and "Traceback" not in result.output
    assert "cannot open database" in result.output, result.output
    assert "s3cr" not in result.output and "pa55" not in result.output


def test_webhook_urls_and_secrets_never_leave_the_process(run_cli, db_url, tmp_path, monkeypatch):
    """Alerts: robots that echo their key, token and secret into error answers; every command's output,
    the runs and the database are scanned for the webhook URLs' keys and the signing secrets."""
    import datetime as dt

    from db import store
    from tests.helpers.alerts import (
        AFTER,
        BEFORE,
        CONFIG,
        DING_SECRET,
        DING_TOKEN,
        FEISHU_HOOK,
        FEISHU_SECRET,
        WECOM_KEY,
        RobotServer,
        recorded_now,
    )

    webhook_secrets = {
        "WECOM_KEY": WECOM_KEY,
        "DING_TOKEN": DING_TOKEN,
        "DING_SECRET": DING_SECRET,
        "FEISHU_HOOK": FEISHU_HOOK,
        "FEISHU_SECRET": FEISHU_SECRET,
    }
    robots = RobotServer()
    echoed = (
        f"key={WECOM_KEY} access_token={DING_TOKEN} secret={DING_SECRET} hook={FEISHU_HOOK} {FEISHU_SECRET}"
    )
    robots.script += [(200, {"errcode": 93000, "errmsg": echoed}), (500, echoed.encode())]
    robots.script += [(200, {"errcode": 310000, "errmsg": echoed}), (200, {"code": 19021, "msg": echoed})]
    env = {
        "PLANNER_WEBHOOK_TEAM": robots.wecom_url,
        "PLANNER_WEBHOOK_DING": robots.dingtalk_url,
        "PLANNER_WEBHOOK_DING_SECRET": DING_SECRET,
        "PLANNER_WEBHOOK_FS": robots.feishu_url,
        "PLANNER_WEBHOOK_FS_SECRET": FEISHU_SECRET,
    }
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    config = tmp_path / "alerts.toml"
    config.write_text(CONFIG, encoding="utf-8")
    written: dict[str, str] = {}
    steps = [
        (dt.datetime(2026, 12, 1, 2), ["refresh", "--from-raw", BEFORE, "--provider", "autodl"]),
        (dt.datetime(2026, 12, 2, 2), ["refresh", "--from-raw", AFTER, "--provider", "autodl"]),
        (None, ["alerts", "check", "--format", "json"]),
        (None, ["alerts", "check"]),
        (None, ["alerts", "list"]),
        (None, ["alerts", "list", "--format", "json"]),
        (None, ["alerts", "test", "ding"]),
        (None, ["alerts", "test", "fs", "--format", "json"]),
        (None, ["runs", "--format", "json", "--limit", "100"]),
        (None, ["runs"]),
    ]
    try:
        for when, args in steps:
            if when is not None:
                monkeypatch.setattr(store, "utcnow", lambda when=when: when)
            given = [str(recorded_now(a)) if isinstance(a, Path) else a for a in args]  # replayed as of now
            result = run_cli("--config", str(config), *given)
            assert "Traceback" not in result.output, (given, result.output)
            label = " ".join(map(str, args))
            written[f"{label}: stdout"] = result.stdout
            written[f"{label}: stderr"] = result.stderr
    finally:
        robots.close()
    assert robots.script == [] and len(robots.requests) >= 7, "the echoing answers were all used"
    assert "failed" in written[f"{' '.join(map(str, steps[1][1]))}: stderr"]
    written["database"] = database_text(db_url)
    leaked = {
        where: [
            n
            for n, v in webhook_secrets.items()
            if any(v[i : i + WINDOW] in text for i in range(len(v) - WINDOW + 1))
        ]
        for where, text in written.items()
    }
    assert not {w: n for w, n in leaked.items() if n}, leaked
