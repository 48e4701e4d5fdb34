"""Each provider's settings, mode and credentials (``planner providers``), and a one-request check of
each (``planner providers --check``), as records. Credentials are reported as present or missing, never
their values; a proxy's password in a base_url is removed."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Mapping
from typing import Any

from sqlalchemy.engine import Engine

from planner.config import Config
from planner.errors import PlannerError
from scrapers.recording import redact_url
from vocab import CheckStatus


def describe(
    config: Config, open_engine: Callable[[], Engine], environ: Mapping[str, str] = os.environ
) -> list[dict[str, Any]]:
    """One record per provider (``open_engine`` gives the database, for the last refresh): enabled, mode, credentials present, what it sees and what to set to see
    more, its configured regions, base_url and charge types, and its last refresh (None when never or
    when the database cannot be read)."""
    from scrapers.registry import PROVIDERS

    records: list[dict[str, Any]] = []
    for name, cls in PROVIDERS.items():
        section = config.provider(name)
        mode = cls().mode(environ)
        records.append(
            {
                "provider": name,
                "enabled": bool(section.get("enabled", True)),
                "mode": mode.mode,
                "credentials_present": mode.credentials_present,
                "credential_env": list(cls.credential_env),
                "credential_env_set": [v for v in cls.credential_env if environ.get(v)],
                "sees": mode.sees,
                "to_see_more": list(mode.unlock_env),
                "credential_help": getattr(cls, "credential_help", ""),
                "base_url": redact_url(section["base_url"]) if section.get("base_url") else None,
                "regions": list(section.get("regions") or []),
                **({"charge_types": list(section["charge_types"])} if "charge_types" in section else {}),
            }
        )
    last = _last_refresh(open_engine, list(PROVIDERS))
    for record in records:
        record["last_refresh"] = last.get(record["provider"])
    return records


def _last_refresh(open_engine: Callable[[], Engine], names: list[str]) -> dict[str, str]:
    """'ok 2026-11-30 02:00 UTC' per provider; empty when the database cannot be read (not needed here)."""
    from db.queries import provider_health

    try:
        with open_engine().connect() as conn:
            health = provider_health(conn, names)
    except PlannerError:
        return {}
    return {name: f"{h.last_status} {h.last_started_at:%Y-%m-%d %H:%M} UTC" for name, h in health.items()}


def check(
    config: Config,
    version: str,
    environ: Mapping[str, str] = os.environ,
    request_log: Callable[[str], None] | None = None,
) -> list[Any]:
    """One cheap request per enabled provider, no retries (a check that waits minutes on a dead host
    would not be cheap): a ``scrapers.check.CheckResult`` each, ``skipped`` for a disabled one."""
    from scrapers.check import CheckResult, check_provider
    from scrapers.registry import PROVIDERS, ProviderSettings, make_client, read_credentials

    results: list[CheckResult] = []
    http = config.section("http")
    for name, cls in PROVIDERS.items():
        section = config.provider(name)
        mode = cls().mode(environ)
        if not section.get("enabled", True):
            results.append(CheckResult(name, mode.mode, CheckStatus.SKIPPED, "disabled in the config"))
            continue
        settings = ProviderSettings(
            base_url=section.get("base_url") or None, credentials=read_credentials(cls, environ)
        )
        policy = dataclasses.replace(
            cls.http_policy,
            max_retries=0,
            min_interval_s=0,
            connect_timeout_s=float(http.get("connect_timeout_s", cls.http_policy.connect_timeout_s)),
            read_timeout_s=float(http.get("read_timeout_s", cls.http_policy.read_timeout_s)),
            deadline_s=float(http.get("deadline_s", cls.http_policy.deadline_s)),
        )
        try:
            client = make_client(cls, settings, version=version, policy=policy, request_log=request_log)
        except Exception as err:  # a bad base_url: say so on this provider's line
            results.append(
                CheckResult(name, mode.mode, CheckStatus.FAILED, str(err), f"fix [providers.{name}] base_url")
            )
            continue
        results.append(check_provider(name, mode.mode, client, settings, mode.unlock_env))
    return results
