"""The [email] settings checked before anything is written or sent: the SMTP server, its login and
the addresses mail goes to. The report e-mail and the e-mail alert channel read them the same way."""

from __future__ import annotations

from email.utils import parseaddr

from planner.config import SMTP_PASSWORD_ENV, Config, secret
from planner.errors import UsageError
from planner.wording import Phrase
from reports.mail import PLAIN_LOGIN_HINT, SmtpSettings, plain_login_refused


def smtp_settings(config: Config, env: dict[str, str] | None = None) -> SmtpSettings:
    """The [email] settings and PLANNER_SMTP_PASSWORD, checked before anything is written."""
    email = config.section("email")
    if not email["smtp_host"]:
        raise UsageError(
            "[email] smtp_host is empty", hint="set it to your SMTP server, e.g. smtp.example.com"
        )
    if email["ssl"] and email["starttls"]:
        raise UsageError(
            "[email] ssl and starttls are both true",
            hint="ssl = true is TLS from the start (usually port 465); starttls = true upgrades a plain "
            "connection (usually 587): set the other to false",
        )
    check_address(email["sender"], "[email] sender")
    password = secret(SMTP_PASSWORD_ENV, env)
    if email["username"] and not password:
        raise UsageError(
            f"[email] username is set but {SMTP_PASSWORD_ENV} is not",
            hint=f"export {SMTP_PASSWORD_ENV}=... (the password is read from the environment only)",
        )
    settings = SmtpSettings(
        host=email["smtp_host"],
        port=int(email["smtp_port"]),
        starttls=email["starttls"],
        ssl=email["ssl"],
        username=email["username"],
        sender=email["sender"],
        password=password,
        deadline_s=float(email["deadline_s"]),
        allow_plain_login=email["allow_plain_login"],
    )
    refused = plain_login_refused(settings)
    if refused:
        raise UsageError(refused, hint=PLAIN_LOGIN_HINT)
    return settings


def check_address(address: str, what: str) -> str:
    """``address`` stripped, or a UsageError (no line breaks: they would forge mail headers). ``what``
    says where it was given, as a :class:`Phrase` template (``"{email}"``, ``"[email] recipients"``)."""
    if "\n" in address or "\r" in address:
        raise UsageError(Phrase(what + ": an e-mail address cannot contain a line break"))
    _, bare = parseaddr(address)
    local, _, domain = bare.partition("@")
    if not local or not domain or any(c.isspace() for c in bare):
        raise UsageError(
            Phrase(what + ": {address!r} is not an e-mail address", address=address),
            hint="use name@example.com",
        )
    return address.strip()
