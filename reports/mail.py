"""E-mail: one message (text and HTML summary, its chart inline, the CSV files and the report's web
page attached) sent over SMTP with retries.

Implicit TLS (``ssl``, usually port 465) or STARTTLS (usually 587), certificates checked against the
system's CA store (``SSL_CERT_FILE`` names another bundle, e.g. a company CA). A server that is down
or answers "try later" (4xx) is retried with growing pauses; a permanent refusal (bad password,
refused sender or recipient, untrusted certificate) fails at once. The password is never shown.

A login over a connection that is neither ``ssl`` nor ``starttls`` is refused unless
``allow_plain_login`` says otherwise: the password would cross the network readable. Each attempt has
a wall-clock deadline (``deadline_s``) over all of its exchanges, so a server that keeps sending
continuation lines, or drips one byte at a time, ends the attempt instead of hanging it. A server that
took the whole message and then said nothing is not sent it again (it may have delivered it).
"""

from __future__ import annotations

import base64
import smtplib
import socket
import ssl
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from email.message import EmailMessage
from email.utils import formatdate, make_msgid
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class SmtpSettings:
    host: str
    port: int
    starttls: bool = True
    ssl: bool = False
    username: str = ""
    sender: str = "planner@localhost"
    password: str | None = field(default=None, repr=False)
    timeout_s: float = 30.0  # one exchange (connect, one reply)
    deadline_s: float = 45.0  # a whole attempt, however the server drips its answers ([email] deadline_s)
    allow_plain_login: bool = False

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

    def without(self, *secrets: str | None) -> MailError:
        """The same error with each of ``secrets`` masked: a server's reply may quote what it was sent."""
        message, hint = self.message, self.hint
        for secret in sorted((s for s in secrets if s), key=len, reverse=True):
            message, hint = message.replace(secret, "***"), hint.replace(secret, "***")
        return MailError(message, hint, self.permanent)


def sent_forms(settings: SmtpSettings) -> tuple[str, ...]:
    """Every form in which the password goes to the server: as it is, and base64-encoded as AUTH LOGIN
    (the password alone) and AUTH PLAIN (with the user name) send it."""
    if not settings.password:
        return ()
    password, user = settings.password, settings.username
    encoded = (password, f"\0{user}\0{password}", f"{user}\0{user}\0{password}")
    return (password, *(base64.b64encode(f.encode()).decode() for f in encoded))


def plain_login_refused(settings: SmtpSettings) -> str | None:
    """Why a login with ``settings`` is refused (it would go unencrypted), or None when it is not."""
    if not settings.username or settings.ssl or settings.starttls or settings.allow_plain_login:
        return None
    return (
        f"[email] username is set but neither starttls nor ssl is on: the password would cross the "
        f"network to {settings.address} unencrypted"
    )


PLAIN_LOGIN_HINT = (
    "set [email] starttls = true (port 587) or ssl = true (465); for a server that only takes plain "
    "logins (one on this machine, say) set [email] allow_plain_login = true"
)


class DeadlinePassed(TimeoutError):
    """An attempt's wall-clock deadline passed."""


class _Deadline:
    """The wall clock of one attempt: every reply line is read, and every command sent, with the
    socket's timeout cut to what is left (a dripping server cannot reset it line by line)."""

    def __init__(self, settings: SmtpSettings):
        self.settings = settings
        self.ends = time.monotonic() + settings.deadline_s

    def left_s(self) -> float:
        left = self.ends - time.monotonic()
        if left <= 0:
            raise DeadlinePassed(f"did not finish answering within {self.settings.deadline_s:g} s")
        return min(left, self.settings.timeout_s)


class _Reader:
    """The reply stream of an SMTP connection, each line read under the attempt's deadline."""

    def __init__(self, sock: socket.socket, deadline: _Deadline):
        self.sock, self.deadline = sock, deadline
        self.file = sock.makefile("rb")

    def readline(self, limit: int = -1) -> bytes:
        self.sock.settimeout(self.deadline.left_s())
        try:
            return self.file.readline(limit)
        except TimeoutError:
            self.deadline.left_s()  # the deadline's own words when it is what ran out
            raise

    def close(self) -> None:
        self.file.close()


class _DeadlineMixin:
    """smtplib's client with the attempt's deadline on every read and write, and a note of whether the
    whole message went out (then a missing answer must not lead to sending it again)."""

    deadline: _Deadline
    message_sent = False
    sock: socket.socket | None
    file: Any

    def getreply(self) -> tuple[int, bytes]:
        if self.sock is not None and not isinstance(self.file, _Reader):
            self.file = _Reader(self.sock, self.deadline)  # again after STARTTLS (a new socket)
        return super().getreply()  # type: ignore[misc]

    def send(self, s: Any) -> None:  # bytes or str, as smtplib sends
        if self.sock is not None:
            try:
                self.sock.settimeout(self.deadline.left_s())
            except OSError as err:  # past the deadline, or a socket a failed handshake closed
                self.close()  # type: ignore[attr-defined]
                raise smtplib.SMTPServerDisconnected(str(err)) from None  # what smtplib raises itself
        super().send(s)  # type: ignore[misc]
        data = s.encode("ascii") if isinstance(s, str) else bytes(s)
        if data.endswith(b"\r\n.\r\n"):
            self.message_sent = True  # the end of DATA: the server has the whole message


class _SMTP(_DeadlineMixin, smtplib.SMTP):
    def __init__(self, settings: SmtpSettings, deadline: _Deadline):
        self.deadline = deadline
        super().__init__(settings.host, settings.port, timeout=deadline.left_s())


class _SMTPSSL(_DeadlineMixin, smtplib.SMTP_SSL):
    def __init__(self, settings: SmtpSettings, deadline: _Deadline, context: ssl.SSLContext):
        self.deadline = deadline
        super().__init__(settings.host, settings.port, timeout=deadline.left_s(), context=context)


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
    """A multipart message: text with an HTML alternative, each file attached (base64, so the
    byte-order mark and line ends reach the recipient unchanged) as text/csv, or text/html for the
    report's web page (``reports.page``, a ``.html`` file).

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
        subtype = "html" if Path(path).suffix.lower() == ".html" else "csv"
        message.add_attachment(
            Path(path).read_bytes(), maintype="text", subtype=subtype, filename=Path(path).name
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
        raise err.without(*sent_forms(settings)) from None


def _send_once_raw(message: EmailMessage, settings: SmtpSettings) -> dict[str, tuple[int, bytes]]:
    where = settings.address
    refused = plain_login_refused(settings)
    if refused:
        raise MailError(refused, PLAIN_LOGIN_HINT, permanent=True)
    client: _SMTP | _SMTPSSL | None = None
    try:
        context = ssl.create_default_context()
        deadline = _Deadline(settings)
        if settings.ssl:
            client = _SMTPSSL(settings, deadline, context)
        else:
            client = _SMTP(settings, deadline)
        with client:
            client.ehlo()
            if settings.starttls and not settings.ssl:
                client.starttls(context=context)
                client.ehlo()
            if settings.username:
                client.login(settings.username, settings.password or "")
            return client.send_message(message)
    except OSError as err:  # smtplib's errors are OSErrors too
        answered = isinstance(err, smtplib.SMTPResponseException | ssl.SSLError)
        if client is None or not client.message_sent or answered:
            raise _mail_error(err, settings) from None
        raise MailError(
            f"{where} took the whole message but did not confirm it ({str(err) or type(err).__name__})",
            "it may have been delivered: check a recipient's mailbox before sending again "
            "(not retried, so that nobody gets it twice)",
            permanent=True,
        ) from None


def _mail_error(err: Exception, settings: SmtpSettings) -> MailError:
    """What one failed attempt means for the user, and whether another attempt may help."""
    where = settings.address
    if isinstance(err, ssl.SSLError):
        return MailError(
            f"TLS with {where} failed: {err.reason or err}",
            "check the server's certificate and [email] ssl/starttls; for a company CA set SSL_CERT_FILE "
            "to its bundle",
            permanent=True,
        )
    if isinstance(err, smtplib.SMTPNotSupportedError):
        return MailError(
            f"{where}: {err}",
            "check [email] starttls and ssl (port 465 is usually ssl = true, 587 starttls = true), or clear "
            "[email] username if the server needs no login",
            permanent=True,
        )
    if isinstance(err, smtplib.SMTPAuthenticationError):
        return MailError(
            f"{where} refused the login of {settings.username!r}: {err.smtp_code} {_text(err.smtp_error)}",
            "check [email] username and the PLANNER_SMTP_PASSWORD environment variable",
            permanent=True,
        )
    if isinstance(err, smtplib.SMTPRecipientsRefused):
        refused = ", ".join(f"{r} ({code} {_text(reply)})" for r, (code, reply) in err.recipients.items())
        return MailError(
            f"{where} refused every recipient: {refused}",
            "check the recipients' addresses, the ones given and those in [email] recipients",
            permanent=all(code >= 500 for code, _ in err.recipients.values()),
        )
    if isinstance(err, smtplib.SMTPSenderRefused):
        return MailError(
            f"{where} refused the sender {err.sender!r}: {err.smtp_code} {_text(err.smtp_error)}",
            "check [email] sender (many servers only accept the login's own address)",
            permanent=err.smtp_code >= 500,
        )
    if isinstance(err, smtplib.SMTPResponseException):
        # Includes SMTPConnectError: a server that answers but refuses service.
        return MailError(
            f"{where} answered {err.smtp_code} {_text(err.smtp_error)}",
            _down_hint(settings),
            permanent=err.smtp_code >= 500 and not isinstance(err, smtplib.SMTPConnectError),
        )
    cause = err if isinstance(err, DeadlinePassed) else err.__context__  # smtplib re-raises it as
    if isinstance(cause, DeadlinePassed):  # "Connection unexpectedly closed: ..."
        return MailError(f"{where} {cause}", _down_hint(settings), False)
    reason = str(err) or type(err).__name__
    return MailError(f"cannot reach the SMTP server {where}: {reason}", _down_hint(settings), False)


def _down_hint(settings: SmtpSettings) -> str:
    mode = "ssl" if settings.ssl else ("starttls" if settings.starttls else "plain")
    return (
        f"check that the server is up and that [email] smtp_host ({settings.host}), smtp_port "
        f"({settings.port}) and the TLS mode ({mode}) are right"
    )


def _text(reply: bytes | str) -> str:
    return reply.decode("utf-8", "replace") if isinstance(reply, bytes) else str(reply)
