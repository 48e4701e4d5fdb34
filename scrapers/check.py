"""``planner providers --check``: one cheap request per provider with the current credentials.

Each check asks the smallest question that proves the mode a refresh would use works: in account mode
a signed call that lists almost nothing (so a refused key shows up here, not in the night's run), in
public mode the first public endpoint the scraper reads. The answer is one :class:`CheckResult`:
``works``, ``refused`` (the provider answered no: credentials, login, permission) or ``failed`` (no
usable answer: network, or a shape we do not understand), with what to do about it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from scrapers.base import ScrapeError
from scrapers.http import HttpClient
from scrapers.types import ProviderSettings
from vocab import CheckStatus


@dataclass(frozen=True)
class CheckResult:
    """One provider's answer to its cheap request."""

    provider: str
    mode: str
    status: CheckStatus
    detail: str  # what was asked and what came back
    todo: str = ""  # what the user should do; empty when it works

    def line(self) -> str:
        text = f"{self.provider}: {self.status} ({self.mode} mode): {self.detail}"
        return f"{text}. To do: {self.todo}" if self.todo else text


# Words a refusal is written in: HTTP 401/403, Tencent AuthFailure*, Aliyun InvalidAccessKeyId* /
# SignatureDoesNotMatch / Forbidden*, Volcengine SignatureDoesNotMatch / InvalidAccessKey, AutoDL login.
_REFUSED = re.compile(
    r"HTTP 40[13]|AuthFailure|InvalidAccessKey|SignatureDoesNotMatch|Forbidden|UnauthorizedOperation|"
    r"NoPermission|InvalidCredential|refused the token|AuthorizeFailed|登录",
    re.IGNORECASE,
)
_NETWORK = re.compile(r"failed after \d+ attempts: (DNS|refused|TLS|timeout|reset|connection)")


def check_provider(
    name: str, mode: str, client: HttpClient, settings: ProviderSettings, unlock: tuple[str, ...]
) -> CheckResult:
    """Run ``name``'s cheap request and say what it means; never raises for the provider's answer.

    The request is the scraper's ``check(client, settings)`` hook (it returns what came back, or raises
    ScrapeError); a scraper without one is ``skipped``. Its ``refused_hint`` says what to do when the
    provider refuses, where that is not "check the credentials".
    """
    from scrapers.registry import PROVIDERS

    cls = PROVIDERS[name]
    check = getattr(cls, "check", None)
    if check is None:
        todo = f"run `planner refresh --provider {name}` to try it"
        return CheckResult(name, mode, CheckStatus.SKIPPED, "no cheap check for this provider", todo)
    try:
        detail = check(client, settings)
    except ScrapeError as exc:
        text = str(exc)
        if _REFUSED.search(text):
            names = " and ".join(settings.credentials) or " and ".join(unlock)
            todo = f"check {names}: the provider refused them (wrong, expired, or without read permission)"
            todo = getattr(cls, "refused_hint", None) or todo
            return CheckResult(name, mode, CheckStatus.REFUSED, text, todo)
        network = _NETWORK.search(text)
        if network:
            where = (
                f"[providers.{name}] base_url" if settings.base_url else "the network (proxy, firewall, DNS)"
            )
            return CheckResult(
                name, mode, CheckStatus.FAILED, text, f"check {where}; the request never got an answer"
            )
        return CheckResult(
            name,
            mode,
            CheckStatus.FAILED,
            text,
            f"run `planner refresh -v --provider {name}` and report the answer",
        )
    todo = ""
    if mode == "public" and unlock:
        todo = f"optional: set {' and '.join(unlock)} to see more (`planner providers` says what)"
    return CheckResult(name, mode, CheckStatus.WORKS, detail, todo)
