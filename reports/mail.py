"""E-mail: one message (text and HTML summary, its chart inline, CSV files attached) sent over SMTP
with retries.

Implicit TLS (``ssl``, usually port 465) or STARTTLS (usually 587), certificates checked against the
system's CA store (``SSL_CERT_FILE`` names another bundle, e.g. a company CA). A server that is down
or answers "try later" (4xx) is retried with growing pauses; a permanent refusal (bad password,
refused sender or recipient, untrusted certificate) fails at once. The password is never shown.
"""

from __future__ import annotations

import smtplib
import ssl
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from email.message import EmailMessage
from email.utils import formatdate, make_msgid
from pathlib import Path


@dataclass(frozen=True)
class SmtpSettings:
    host: str
    port: int
    starttls: bool = True
    ssl: bool = False
    username: str = ""
    sender: str = "planner@localhost"
    password: str | None = field(default=None, repr=False)
    timeout_s: float = 30.0

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"


class MailError(Exception):
    """The message could not be sent. ``permanent`` is False when retrying later may help."""

    def __init__(self, message: str, hint: str, permanent: bool):
        super().__init__(message)
        self.message = message
        self.hint = hint
        self.permanent = permanent

    def without(self, secret: str | None) -> MailError:
        """The same error with ``secret`` masked: a server's reply may quote what it was sent."""
        if not secret or (secret not in self.message and secret not in self.hint):
            return self
        return MailError(
            self.message.replace(secret, "***"), self.hint.replace(secret, "***"), self.permanent
        )


def new_id(sender: str) -> str:
    """A unique ``<...@domain>`` id in the sender's domain: a Message-ID, or a Content-ID that the HTML
    names as ``cid:`` followed by the id without its angle brackets."""
    return make_msgid(domain=sender.rpartition("@")[2] or None)


def compose(
    subject: str,
    text: str,
    html: str,
    sender: str,
    recipients: Sequence[str],
    attachments: Sequence[Path],
    images: Sequence[tuple[str, Path]] = (),
) -> EmailMessage:
    """A multipart message: text with an HTML alternative, each file attached as text/csv (base64,
    so the byte-order mark and line ends reach the recipient unchanged).

    ``images`` are (Content-ID from ``new_id``, PNG file) pairs shown inside the HTML, which names each
    as ``<img src="cid:...">``: the HTML part becomes multipart/related with the images beside it.
    """
    message = EmailMessage()
    message["Subject"] = subject
    message["From"] = sender
    message["To"] = ", ".join(recipients)
    message["Date"] = formatdate(localtime=True)
    message["Message-ID"] = new_id(sender)
    message.set_content(text)
    message.add_alternative(html, subtype="html")
    html_part = message.get_body(("html",))  # add_related turns it into multipart/related in place
    assert isinstance(html_part, EmailMessage)
    for cid, path in images:
        html_part.add_related(
            Path(path).read_bytes(), "image", "png", cid=cid, disposition="inline", filename=Path(path).name
        )
    for path in attachments:
        message.add_attachment(
            Path(path).read_bytes(), maintype="text", subtype="csv", filename=Path(path).name
        )
    return message


def send(
    message: EmailMessage,
    settings: SmtpSettings,
    *,
    attempts: int = 3,
    backoff_s: float = 5.0,
    sleep: Callable[[float], None] | None = None,
    on_retry: Callable[[int, MailError, float], None] | None = None,
) -> dict[str, tuple[int, bytes]]:
    """Send ``message``; retry transient failures ``attempts`` times in all, pausing backoff_s, 2x, ...

    Returns the recipients the server refused while accepting others (empty when all were accepted).
    Raises MailError when nothing could be delivered.
    """
    error: MailError | None = None
    for attempt in range(1, attempts + 1):
        try:
            return _send_once(message, settings)
        except MailError as err:
            error = err
        if error.permanent or attempt == attempts:
            break
        wait_s = backoff_s * 2 ** (attempt - 1)
        if on_retry:
            on_retry(attempt, error, wait_s)
        (sleep or pause)(wait_s)
    assert error is not None
    if not error.permanent and attempts > 1:
        error.message += f" (tried {attempts} times)"
    raise error


def pause(seconds: float) -> None:
    """The wait between attempts (a module attribute, so a test can replace it)."""
    time.sleep(seconds)


def _send_once(message: EmailMessage, settings: SmtpSettings) -> dict[str, tuple[int, bytes]]:
    try:
        return _send_once_raw(message, settings)
    except MailError as err:
        raise err.without(settings.password) from None


def _send_once_raw(message: EmailMessage, settings: SmtpSettings) -> dict[str, tuple[int, bytes]]:
    where = settings.address
    try:
        context = ssl.create_default_context()
        if settings.ssl:
            client: smtplib.SMTP = smtplib.SMTP_SSL(
                settings.host, settings.port, timeout=settings.timeout_s, context=context
            )
        else:
            client = smtplib.SMTP(settings.host, settings.port, timeout=settings.timeout_s)
        with client:
            client.ehlo()
            if settings.starttls and not settings.ssl:
                client.starttls(context=context)
                client.ehlo()
            if settings.username:
                client.login(settings.username, settings.password or "")
            return client.send_message(message)
    except ssl.SSLError as err:
        raise MailError(
            f"TLS with {where} failed: {err.reason or err}",
            "check the server's certificate and [email] ssl/starttls; for a company CA set SSL_CERT_FILE "
            "to its bundle",
            permanent=True,
        ) from None
    except smtplib.SMTPNotSupportedError as err:
        raise MailError(
            f"{where}: {err}",
            "check [email] starttls and ssl (port 465 is usually ssl = true, 587 starttls = true), or clear "
            "[email] username if the server needs no login",
            permanent=True,
        ) from None
    except smtplib.SMTPAuthenticationError as err:
        raise MailError(
            f"{where} refused the login of {settings.username!r}: {err.smtp_code} {_text(err.smtp_error)}",
            "check [email] username and the PLANNER_SMTP_PASSWORD environment variable",
            permanent=True,
        ) from None
    except smtplib.SMTPRecipientsRefused as err:
        refused = ", ".join(f"{r} ({code} {_text(reply)})" for r, (code, reply) in err.recipients.items())
        raise MailError(
            f"{where} refused every recipient: {refused}",
            "check the addresses given with --email or in [email] recipients",
            permanent=all(code >= 500 for code, _ in err.recipients.values()),
        ) from None
    except smtplib.SMTPSenderRefused as err:
        raise MailError(
            f"{where} refused the sender {err.sender!r}: {err.smtp_code} {_text(err.smtp_error)}",
            "check [email] sender (many servers only accept the login's own address)",
            permanent=err.smtp_code >= 500,
        ) from None
    except smtplib.SMTPResponseException as err:
        # Includes SMTPConnectError: a server that answers but refuses service.
        raise MailError(
            f"{where} answered {err.smtp_code} {_text(err.smtp_error)}",
            _down_hint(settings),
            permanent=err.smtp_code >= 500 and not isinstance(err, smtplib.SMTPConnectError),
        ) from None
    except (smtplib.SMTPException, OSError) as err:
        reason = str(err) or type(err).__name__
        raise MailError(
            f"cannot reach the SMTP server {where}: {reason}", _down_hint(settings), False
        ) from None


def _down_hint(settings: SmtpSettings) -> str:
    mode = "ssl" if settings.ssl else ("starttls" if settings.starttls else "plain")
    return (
        f"check that the server is up and that [email] smtp_host ({settings.host}), smtp_port "
        f"({settings.port}) and the TLS mode ({mode}) are right"
    )


def _text(reply: bytes | str) -> str:
    return reply.decode("utf-8", "replace") if isinstance(reply, bytes) else str(reply)
