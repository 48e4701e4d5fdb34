"""E-mail: the message as plain text (and the same in <pre> as HTML) through ``reports.mail`` and the
[email] SMTP settings, to the channel's ``recipients`` or else [email] recipients."""

from __future__ import annotations

import html
from collections.abc import Mapping
from typing import Any

from planner.alerts.channels.base import Channel, Delivery, Kind, Sending
from planner.errors import ConfigError, PlannerError
from planner.smtp import smtp_settings
from reports.mail import MailError, compose, send


class Email(Kind):
    name = "email"
    sends_through = "[email]"
    max_bytes = 1_000_000
    keys = ("recipients",)  # default: [email] recipients

    def settings(self, table: Mapping[str, Any], where: str) -> dict[str, Any]:
        recipients = table.get("recipients", [])
        if not isinstance(recipients, list) or not all(isinstance(r, str) and "@" in r for r in recipients):
            raise ConfigError(f"{where}: recipients must be a list of e-mail addresses")
        return {"recipients": tuple(recipients)}

    def send(self, channel: Channel, title: str, markdown: str, sending: Sending) -> Delivery:
        config, policy = sending.config, sending.policy
        recipients = list(channel.recipients) or list(config.section("email").get("recipients", []))
        if not recipients:
            return sending.failed(
                channel, 0, "no recipients: set [email] recipients or recipients in the channel"
            )
        try:
            settings = smtp_settings(config, dict(sending.env))
        except PlannerError as err:
            return sending.failed(channel, 0, err.message)
        page = f"<html><body><pre>{html.escape(markdown)}</pre></body></html>"
        message = compose(title, markdown, page, settings.sender, recipients, [])
        try:
            refused = send(
                message, settings, attempts=policy.attempts, backoff_s=policy.backoff_s, sleep=sending.sleep
            )
        except MailError as err:
            return sending.failed(channel, policy.attempts, f"{err.message} ({err.hint})")
        # refused by some: the others got it, and resending would repeat it to them
        error = f"refused: {', '.join(sorted(refused))}" if refused else None
        return Delivery(channel.name, channel.kind, sending.alerts, True, 1, error)


EMAIL = Email()
