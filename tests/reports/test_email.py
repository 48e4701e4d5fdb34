"""``planner report --email`` against a real SMTP server on loopback (aiosmtpd): plain, STARTTLS with
AUTH, implicit TLS, a server that says "try later", a wrong password, and a server that is down."""

from __future__ import annotations

import re

import pytest
from aiosmtpd.smtp import AuthResult, LoginPassword

from reports.mail import MailError, SmtpSettings, compose, send
from tests.conftest import price_row, write_csv
from tests.helpers.cli import line_of
from tests.helpers.smtp import Recorder, email_config, free_port, parse, server_context, smtp_server

PASSWORD = "s3cret-pa55word"
BOM = b"\xef\xbb\xbf"


def authenticator(server, session, envelope, mechanism, auth_data):  # noqa: ANN001, ANN201
    ok = isinstance(auth_data, LoginPassword) and auth_data == LoginPassword(b"planner", PASSWORD.encode())
    return AuthResult(success=ok, handled=False)  # handled=False: aiosmtpd answers 535 itself


@pytest.fixture
def filled(run_cli, db_url, tmp_path):
    from tests.helpers.db_edits import rename_instances

    rows = [
        price_row(),
        price_row(provider="autodl", region="西北B区", instance_type="F1", price="6"),
    ]
    assert run_cli("import", str(write_csv(tmp_path / "p.csv", rows))).exit_code == 0
    rename_instances(db_url, {"F1": '=HYPERLINK("x")'})  # provider text an import would refuse today


def test_report_email_delivers_one_message_with_the_csv_files_attached(run_cli, tmp_path, filled):
    handler = Recorder()
    out = tmp_path / "out"
    with smtp_server(handler) as port:
        config = email_config(tmp_path, port, recipients=["ml-team@example.com", "ops@example.com"])
        result = run_cli("--config", str(config), "report", "--out", str(out), "--email")
    assert result.exit_code == 0, result.output
    sent = line_of(result.stdout, "Sent to")
    assert "ml-team@example.com, ops@example.com" in sent  # every recipient
    assert len(handler.messages) == 1
    sender, rcpts, raw = handler.messages[0]
    assert sender == "planner@localhost" and rcpts == ["ml-team@example.com", "ops@example.com"]
    message = parse(raw)
    attachments = list(message.iter_attachments())
    (page,) = out.glob("*_report.html")  # the web page rides beside the CSV files (reports.page)
    (html_file,) = [a for a in attachments if a.get_content_type() == "text/html"]
    assert html_file.get_filename() == page.name and html_file.get_payload(decode=True) == page.read_bytes()
    shown = html_file.get_content()
    assert 'id="cheapest"' in shown and "=HYPERLINK(&quot;x&quot;)" in shown and '("x")' not in shown
    attachments.remove(html_file)
    assert sorted(a.get_filename() for a in attachments) == sorted(p.name for p in out.glob("*.csv"))
    assert len(attachments) == 5
    for part in attachments:
        data = part.get_payload(decode=True)
        assert part.get_content_type() == "text/csv"
        assert data.startswith(BOM) and data == (out / part.get_filename()).read_bytes()
        assert data[len(BOM) :].split(b"\n", 1)[0].startswith((b"gpu_model,", b"since,", b"provider,"))
    text = message.get_body(("plain",)).get_content()
    html = message.get_body(("html",)).get_content()
    assert "Cheapest per GPU-hour" in text and "A100-40GB" in text and "autodl" in text
    assert "&quot;x&quot;" in html and '=HYPERLINK("x")' not in html  # provider text is escaped
    assert message["Subject"].startswith("GPU prices ")


def test_starttls_with_login(run_cli, tmp_path, filled, certificate, monkeypatch):
    handler = Recorder()
    monkeypatch.setenv("SSL_CERT_FILE", str(certificate[0]))  # trust the test certificate
    monkeypatch.setenv("PLANNER_SMTP_PASSWORD", PASSWORD)
    with smtp_server(
        handler,
        tls_context=server_context(certificate),
        require_starttls=True,
        authenticator=authenticator,
        auth_required=True,
    ) as port:
        config = email_config(tmp_path, port, starttls=True, username="planner", sender="planner@example.com")
        result = run_cli(
            "--config", str(config), "report", "--out", str(tmp_path / "o"), "--email", "a@example.com"
        )
    assert result.exit_code == 0, result.output
    assert [m[1] for m in handler.messages] == [["a@example.com"]]
    assert PASSWORD not in result.output


def test_implicit_tls(run_cli, tmp_path, filled, certificate, monkeypatch):
    handler = Recorder()
    monkeypatch.setenv("SSL_CERT_FILE", str(certificate[0]))
    with smtp_server(handler, ssl_context=server_context(certificate)) as port:
        config = email_config(tmp_path, port, ssl=True)
        result = run_cli(
            "--config", str(config), "report", "--out", str(tmp_path / "o"), "--email", "a@example.com"
        )
    assert result.exit_code == 0, result.output
    assert len(handler.messages) == 1


def test_an_untrusted_certificate_fails_at_once(run_cli, tmp_path, filled, certificate, monkeypatch):
    monkeypatch.setenv("SSL_CERT_FILE", str(tmp_path / "nothing.pem"))
    monkeypatch.setattr("reports.mail.pause", lambda s: pytest.fail("a TLS failure must not be retried"))
    with smtp_server(Recorder(), tls_context=server_context(certificate), require_starttls=True) as port:
        config = email_config(tmp_path, port, starttls=True)
        result = run_cli(
            "--config", str(config), "report", "--out", str(tmp_path / "o"), "--email", "a@example.com"
        )
    assert result.exit_code == 1
    assert "TLS with 127.0.0.1" in result.stderr and "SSL_CERT_FILE" in result.stderr


def test_a_wrong_password_fails_at_once_and_is_never_shown(
    run_cli, tmp_path, filled, certificate, monkeypatch
):
    wrong = "not-the-password-42"
    monkeypatch.setenv("SSL_CERT_FILE", str(certificate[0]))
    monkeypatch.setenv("PLANNER_SMTP_PASSWORD", wrong)
    monkeypatch.setattr("reports.mail.pause", lambda s: pytest.fail("a refused login must not be retried"))
    handler = Recorder()
    with smtp_server(
        handler, tls_context=server_context(certificate), require_starttls=True, authenticator=authenticator
    ) as port:
        config = email_config(tmp_path, port, starttls=True, username="planner")
        result = run_cli(
            "--config", str(config), "report", "--out", str(tmp_path / "o"), "--email", "a@example.com"
        )
    assert result.exit_code == 1 and handler.messages == []
    assert "refused the login of 'planner'" in result.stderr and "PLANNER_SMTP_PASSWORD" in result.stderr
    assert wrong not in result.output and PASSWORD not in result.output
    assert len(list((tmp_path / "o").glob("*.csv"))) == 5


def test_a_busy_server_is_retried_and_then_delivers_once(run_cli, tmp_path, filled, monkeypatch):
    pauses: list[float] = []
    monkeypatch.setattr("reports.mail.pause", pauses.append)
    handler = Recorder(busy=2)
    with smtp_server(handler) as port:
        result = run_cli(
            "--config",
            str(email_config(tmp_path, port)),
            "report",
            "--out",
            str(tmp_path / "o"),
            "--email",
            "a@x.org",
        )
    assert result.exit_code == 0, result.output
    assert pauses == [5.0, 10.0] and len(handler.messages) == 1
    assert result.stderr.count("retrying in") == 2 and "451" in result.stderr


def test_smtp_down_exits_non_zero_and_keeps_the_report_on_disk(run_cli, tmp_path, filled, monkeypatch):
    pauses: list[float] = []
    monkeypatch.setattr("reports.mail.pause", pauses.append)
    port = free_port()  # nothing listens here
    out = tmp_path / "out"
    config = email_config(tmp_path, port, recipients=["ops@example.com"])
    result = run_cli("--config", str(config), "report", "--out", str(out), "--email")
    assert result.exit_code == 1
    assert pauses == [5.0, 10.0]
    assert len(list(out.glob("*.csv"))) == 5
    assert "cannot reach the SMTP server" in result.stderr and f"127.0.0.1:{port}" in result.stderr
    assert "tried 3 times" in result.stderr
    assert "check that the server is up" in result.stderr and str(out) in result.stderr
    assert "Traceback" not in result.output


@pytest.mark.parametrize(
    ("settings", "args", "fragment"),
    [
        ({"ssl": True, "starttls": True}, ["--email", "a@x.org"], "ssl and starttls are both true"),
        ({"username": "planner"}, ["--email", "a@x.org"], "PLANNER_SMTP_PASSWORD is not"),
        ({}, ["--email"], "needs [email] recipients"),
        ({}, ["--email", "not-an-address"], "is not an e-mail address"),
        ({}, ["--email", "a@x.org\nBcc: b@y.org"], "line break"),
        ({"recipients": ["ok@x.org", "bad address"]}, ["--email"], "is not an e-mail address"),
    ],
)
def test_email_mistakes_stop_before_anything_is_written(run_cli, tmp_path, settings, args, fragment):
    out = tmp_path / "out"
    result = run_cli(
        "--config", str(email_config(tmp_path, 25, **settings)), "report", "--out", str(out), *args
    )
    assert result.exit_code == 2, result.output
    assert fragment in result.stderr and "Traceback" not in result.output
    assert not out.exists()


def test_send_retries_with_growing_pauses_then_gives_up(tmp_path):
    pauses: list[float] = []
    retries: list[int] = []
    message = compose("s", "t", "<p>t</p>", "a@x.org", ["b@x.org"], [])
    settings = SmtpSettings(host="127.0.0.1", port=free_port(), starttls=False, password=PASSWORD)
    with pytest.raises(MailError) as caught:
        send(
            message,
            settings,
            attempts=4,
            backoff_s=1.5,
            sleep=pauses.append,
            on_retry=lambda n, e, w: retries.append(n),
        )
    assert pauses == [1.5, 3.0, 6.0] and retries == [1, 2, 3]
    assert not caught.value.permanent and "tried 4 times" in caught.value.message
    assert PASSWORD not in repr(settings)


class RefusesNobody(Recorder):
    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):  # noqa: ANN001, ANN201
        if address.startswith("nobody@"):
            return "550 5.1.1 no such user"
        envelope.rcpt_tos.append(address)
        return "250 OK"


def test_a_refused_recipient_is_named_and_the_exit_code_says_so(run_cli, tmp_path, filled):
    handler = RefusesNobody()
    with smtp_server(handler) as port:
        result = run_cli(
            "--config", str(email_config(tmp_path, port)), "report", "--out", str(tmp_path / "o"),
            "--email", "ok@example.com", "--email", "nobody@example.com",
        )  # fmt: skip
    assert result.exit_code == 1
    assert [m[1] for m in handler.messages] == [["ok@example.com"]]
    refused = next(line for line in result.stderr.splitlines() if "refused some recipients" in line)
    assert "nobody@example.com (550)" in refused  # who, and the server's code
    assert "the report went to ok@example.com" in result.stderr
    assert "Sent to ok@example.com." in result.stdout and "nobody" not in result.stdout


def test_the_default_smtp_deadlines_are_what_a_person_would_wait():
    """`planner report --email` and the nightly job send with the defaults: every attempt's deadline
    and the pauses between them, all told, at most 3 minutes (it was 300 s x 3 + 15 s, over 15)."""
    import inspect

    from planner.config import load_config
    from planner.smtp import smtp_settings
    from reports.mail import send

    settings = smtp_settings(load_config(env={}), {})
    defaults = inspect.signature(send).parameters
    attempts, backoff_s = defaults["attempts"].default, defaults["backoff_s"].default
    worst_s = settings.deadline_s * attempts + sum(backoff_s * 2**i for i in range(attempts - 1))
    assert worst_s <= 180, worst_s
    assert settings.deadline_s >= 30  # still room for a slow server to take a report with its files


def test_with_language_zh_the_report_email_is_in_chinese(run_cli, tmp_path, filled):
    handler = Recorder()
    out = tmp_path / "out"
    with smtp_server(handler) as port:
        config = email_config(tmp_path, port, recipients=["ml-team@example.com"])
        config.write_text(
            '[locale]\nlanguage = "zh"\n' + config.read_text(encoding="utf-8"), encoding="utf-8"
        )
        result = run_cli("--config", str(config), "report", "--out", str(out), "--email")
    assert result.exit_code == 0, result.output
    raw = handler.messages[0][2]
    assert "GPU 价格".encode() not in raw  # the subject is RFC 2047-encoded, the bodies base64: 7-bit safe
    message = parse(raw)  # decodes the subject and every part
    assert message["Subject"].startswith("GPU 价格 ") and "条价格" in message["Subject"]
    text = message.get_body(("plain",)).get_content()
    html = message.get_body(("html",)).get_content()
    assert "每卡时最低价" in text and "阿里云" in text and "元/卡时（按量付费，按小时）" in text
    assert (
        "附件（CSV 文件为 UTF-8 编码" in text
        and "完整报告" in text
        and '<html lang="zh-CN">' in html
        and "阿里云" in html
    )
    headers = {}
    for part in message.iter_attachments():
        if part.get_content_type() == "text/csv":
            data = part.get_payload(decode=True)[len(BOM) :].decode("utf-8")
            headers[part.get_filename().rsplit("_", 1)[1]] = data.split("\n", 1)[0]
    assert len(headers) == 5
    for name, header in headers.items():  # every column has its Chinese heading (none falls back)
        untranslated = [cell for cell in header.split(",") if not re.search(r"[\u4e00-\u9fff]", cell)]
        assert untranslated == [], (name, untranslated)
    assert headers["cheapest.csv"].startswith("GPU 型号,每卡时价格（元）,云厂商,地域")
    assert headers["health.csv"].startswith("云厂商,状态")
    cheapest = (out / next(n for n in headers if n == "cheapest.csv")).name
    assert ",on_demand," in next(out.glob(f"*_{cheapest}")).read_text(encoding="utf-8-sig")  # values stay
