"""Settings: packaged defaults, overlaid by ./config.toml, by --config/PLANNER_CONFIG, by environment
variables and finally by command-line flags (the CLI applies those).

Every file is checked against the packaged defaults: an unknown section or key, a value of the wrong
type, or a number outside its sensible range (``RANGES``: a negative timeout, zero retries that would
mean no request at all, a port above 65535, NaN) is a one-line ConfigError naming the file and the
setting. Secrets never come from a file.
"""

from __future__ import annotations

import copy
import difflib
import functools
import ipaddress
import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from importlib import resources
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError, available_timezones

from platformdirs import user_data_dir

from planner.errors import ConfigError, UsageError
from planner.wording import Phrase
from vocab.words import LANGUAGES, language_from_environment

CONFIG_ENV = "PLANNER_CONFIG"
DATABASE_URL_ENV = "PLANNER_DATABASE_URL"
DATA_DIR_ENV = "PLANNER_DATA_DIR"
SMTP_PASSWORD_ENV = "PLANNER_SMTP_PASSWORD"

# Environment variables that override one setting each.
ENV_SETTINGS: dict[str, tuple[str, str]] = {DATABASE_URL_ENV: ("database", "url")}

# Settings whose shape the alerts check (planner.alerts.rules): a list of [[alerts]] rules and a table
# of [channels.NAME] tables, each free to name its own entries.
FREE_FORM = frozenset({"alerts", "channels"})

# The numbers a setting may take, inclusive: dotted name -> (lowest, highest). ``*`` stands for any one
# name (a provider, a currency). A value outside (or NaN) is refused when the file is read, so a typo
# never surfaces at 02:00 as "every provider timed out" or a traceback.
RANGES: dict[str, tuple[float, float]] = {
    "database.busy_timeout_s": (0, 3600),
    "quote.top": (1, 1000),
    "quote.history_days": (1, 3650),
    "fx.*": (1e-6, 1e6),
    "http.connect_timeout_s": (0.01, 600),
    "http.read_timeout_s": (0.01, 3600),
    "http.deadline_s": (0.1, 3600),
    "http.webhook_budget_s": (1, 3600),
    "http.retries": (0, 10),
    "http.backoff_s": (0, 600),
    "refresh.concurrency": (1, 16),
    "refresh.provider_timeout_s": (1, 86400),
    "email.smtp_port": (1, 65535),
    "email.deadline_s": (1, 86400),
    "schedule.misfire_grace_s": (0, 7 * 86400),
    "schedule.job_timeout_s": (1, 7 * 86400),
    "schedule.stop_wait_s": (0, 3600),
    "providers.*.min_interval_s": (0, 60),
}


# The words a text setting may take: dotted name -> its choices ("" = decided elsewhere, as documented).
CHOICES: dict[str, tuple[str, ...]] = {"locale.language": ("", *LANGUAGES)}


@dataclass(frozen=True)
class Config:
    """The merged settings and the files they came from (weakest first)."""

    data: dict[str, Any]
    files: tuple[str, ...] = ()
    overrides: dict[str, str] = field(default_factory=dict)
    local_file: str | None = None  # ./config.toml of the folder the command ran in, if one was read

    def sources(self) -> str:
        """Where the settings came from, strongest last: "packaged defaults, ./config.toml (found in
        the current folder)". A config.toml planted in a folder is loaded; this says so."""
        named = [f"{f} (found in the current folder)" if f == self.local_file else f for f in self.files]
        return ", ".join(["packaged defaults", *named])

    def section(self, name: str) -> dict[str, Any]:
        return self.data.get(name, {})

    def provider(self, name: str) -> dict[str, Any]:
        return self.data.get("providers", {}).get(name, {})

    @property
    def database_url(self) -> str:
        url = self.data["database"]["url"]
        return url or default_sqlite_url()


def language(config: Config, env: Mapping[str, str] | None = None) -> str:
    """The language people read: [locale] language (``--lang`` sets it), else the user's locale
    (``LANG=zh_CN.UTF-8`` -> "zh"), else English. ``vocab.words`` holds both languages' sentences."""
    chosen = config.section("locale").get("language", "")
    return chosen or language_from_environment(env)


def with_language(config: Config, lang: str | None) -> Config:
    """``config`` with ``--lang`` in [locale] language (None: unchanged)."""
    if not lang:
        return config
    data = copy.deepcopy(config.data)
    data.setdefault("locale", {})["language"] = lang
    return replace(config, data=data, overrides={**config.overrides, "locale.language": "the command line"})


def data_dir() -> Path:
    """The folder for the default database and the tool's state (PLANNER_DATA_DIR overrides)."""
    override = os.environ.get(DATA_DIR_ENV)
    if override:
        return Path(override).expanduser()

    return Path(user_data_dir("planner", appauthor=False))


def default_sqlite_url() -> str:
    return f"sqlite:///{data_dir() / 'planner.db'}"


@functools.cache
def _parsed_defaults() -> dict[str, Any]:
    """defaults.toml, read and parsed once per process (a long-lived process, the scheduler or a test
    session, loads the config hundreds of times). Never handed out: callers get a copy."""
    text = resources.files("planner").joinpath("defaults.toml").read_text(encoding="utf-8")
    return tomllib.loads(text)


def packaged_defaults() -> dict[str, Any]:
    """The packaged defaults (planner/defaults.toml), the caller's own copy."""
    return copy.deepcopy(_parsed_defaults())


def load_config(
    config_file: str | os.PathLike[str] | None = None,
    env: Mapping[str, str] | None = None,
    cwd: str | os.PathLike[str] | None = None,
) -> Config:
    """Merge defaults, ./config.toml, the named file (argument or PLANNER_CONFIG) and the environment."""
    env = os.environ if env is None else env
    defaults = _parsed_defaults()  # only read here
    merged = copy.deepcopy(defaults)
    files: list[str] = []

    local = Path(cwd or os.getcwd()) / "config.toml"
    named = config_file or env.get(CONFIG_ENV) or None
    candidates: list[tuple[Path, bool]] = []
    if local.is_file() and not (named and _same_file(local, Path(named).expanduser())):
        candidates.append((local, False))
    if named:
        candidates.append((Path(named).expanduser(), True))
    for path, required in candidates:
        if required and not path.is_file():
            raise ConfigError(
                f"config file {str(path)!r} not found",
                hint=Phrase("check {config} or ${env}", env=CONFIG_ENV),
            )
        layer = _read_toml(path)
        _check_layer(layer, defaults, str(path))
        if not required:  # found in the folder the command runs in, not chosen
            _refuse_weakening(layer, str(path))
        _merge(merged, layer)
        files.append(str(path))

    overrides: dict[str, str] = {}
    for var, (section, key) in ENV_SETTINGS.items():
        value = env.get(var)
        if value:
            merged[section][key] = value
            overrides[f"{section}.{key}"] = var
    local_file = str(local) if (local, False) in candidates else None  # found, not named
    return Config(data=merged, files=tuple(files), overrides=overrides, local_file=local_file)


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve() or (b.is_file() and os.path.samefile(a, b))
    except OSError:
        return False


# What a config.toml merely found in the working folder may not set: anyone who can write a file in a
# folder someone runs planner from (a cloned repository, a shared directory) would otherwise send the
# credentials readable (plain http, a plain login) or to a host of their choosing (base_url). Each is
# (dotted name with * for any one name, whether a value does weaken).
WEAKENING: tuple[tuple[str, Any], ...] = (
    ("providers.*.base_url", lambda v: bool(str(v).strip())),
    ("providers.*.allow_plain_http", lambda v: v is True),
    ("channels.*.allow_plain_http", lambda v: v is True),
    ("email.allow_plain_login", lambda v: v is True),
)


def _refuse_weakening(layer: Mapping[str, Any], origin: str) -> None:
    """ConfigError when a working-folder file sets one of ``WEAKENING``: the same file given with
    ``--config`` (or PLANNER_CONFIG) is the user's choice, and may."""
    for pattern, weakens in WEAKENING:
        for where, value in _settings_at(layer, pattern.split(".")):
            if weakens(value):
                raise ConfigError(
                    f"{origin}: {where} = {value!r} weakens security, and a config.toml found in the "
                    "current folder may not do that (it could send credentials readable or elsewhere)",
                    hint=Phrase(
                        "if you trust this file, name it: {config} {file} (or ${env}); else remove the setting",
                        file=origin,
                        env=CONFIG_ENV,
                    ),
                )


def _settings_at(table: Any, parts: list[str], prefix: str = "") -> list[tuple[str, Any]]:
    if not parts:
        return [(prefix, table)]
    if not isinstance(table, Mapping):
        return []
    head, rest = parts[0], parts[1:]
    keys = list(table) if head == "*" else [head] if head in table else []
    return [
        hit for key in keys for hit in _settings_at(table[key], rest, f"{prefix}{'.' if prefix else ''}{key}")
    ]


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as fh:
            return tomllib.load(fh)
    except OSError as exc:
        raise ConfigError(f"cannot read config file {str(path)!r}: {exc.strerror}") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"config file {str(path)!r} is not UTF-8 text (byte {exc.start})", hint="save it as UTF-8"
        ) from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(
            f"config file {str(path)!r} is not valid TOML: {exc}",
            hint="fix that line: settings are `name = value` under [section], text in quotes",
        ) from None


def _check_layer(
    layer: Mapping[str, Any], defaults: Mapping[str, Any], origin: str, prefix: str = ""
) -> None:
    for key, value in layer.items():
        where = f"{prefix}{key}"
        if not prefix and key in FREE_FORM:
            continue  # checked, with the rule's name in every message, by planner.alerts.rules
        if key not in defaults:
            near = difflib.get_close_matches(key, list(defaults), n=1)
            hint = f"did you mean {prefix}{near[0]}?" if near else "see the documented config.toml"
            raise ConfigError(f"{origin}: unknown setting {where!r}", hint=hint)
        expected = defaults[key]
        if isinstance(expected, dict):
            if not isinstance(value, dict):
                raise ConfigError(f"{origin}: {where!r} must be a table ([{where}])")
            _check_layer(value, expected, origin, prefix=f"{where}.")
        elif not _same_type(expected, value):
            raise ConfigError(
                f"{origin}: setting {where!r} must be {_type_name(expected)}, got {value!r}",
                hint=f"the default is {expected!r}",
            )
        elif where in CHOICES and value not in CHOICES[where]:
            shown = " or ".join(repr(c) for c in CHOICES[where])
            raise ConfigError(
                f"{origin}: setting {where!r} must be {shown}, got {value!r}",
                hint=f"the default is {expected!r}",
            )
        elif not _in_range(where, value):
            low, high = _range(where) or (0, 0)
            raise ConfigError(
                f"{origin}: setting {where!r} must be between {low:g} and {high:g}, got {value!r}",
                hint=f"the default is {expected!r}",
            )


def _range(where: str) -> tuple[float, float] | None:
    parts = where.split(".")
    for name, bounds in RANGES.items():
        pattern = name.split(".")
        if len(pattern) == len(parts) and all(p in ("*", q) for p, q in zip(pattern, parts, strict=True)):
            return bounds
    return None


def _in_range(where: str, value: Any) -> bool:
    bounds = _range(where)
    if bounds is None or isinstance(value, bool) or not isinstance(value, int | float):
        return True
    return bounds[0] <= value <= bounds[1]  # False for NaN


def _same_type(expected: Any, value: Any) -> bool:
    if isinstance(expected, bool) or isinstance(value, bool):
        return isinstance(expected, bool) and isinstance(value, bool)
    if isinstance(expected, float):
        return isinstance(value, int | float)
    if isinstance(expected, list):
        return isinstance(value, list) and all(isinstance(v, str) for v in value)
    return isinstance(value, type(expected))


def _type_name(value: Any) -> str:
    names = {bool: "true or false", int: "a whole number", float: "a number", str: "a string"}
    if isinstance(value, list):
        return "a list of strings"
    return names.get(type(value), type(value).__name__)


def _merge(into: dict[str, Any], layer: Mapping[str, Any]) -> None:
    for key, value in layer.items():
        if isinstance(value, dict) and isinstance(into.get(key), dict):
            _merge(into[key], value)
        else:
            into[key] = value


def plain_http_refused(name: str, section: Mapping[str, Any], sends_credentials: bool) -> str | None:
    """Why provider ``name`` must not use its ``base_url``, or None: a plain-http URL to another machine
    would carry the credentials readable, unless ``allow_plain_http`` says so."""
    base_url = section.get("base_url") or ""
    parts = urlsplit(base_url)
    if not sends_credentials or parts.scheme != "http" or section.get("allow_plain_http"):
        return None
    if is_loopback(parts.hostname or ""):
        return None
    return (
        f"[providers.{name}] base_url is plain http to {parts.hostname}: the credentials would cross the "
        "network readable, so nothing was sent"
    )


def plain_http_hint(name: str) -> str:
    return f"use https://, or set [providers.{name}] allow_plain_http = true for a proxy you trust"


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def secret(name: str, env: Mapping[str, str] | None = None) -> str | None:
    """A secret from the environment only (never from a config file); None when unset or empty."""
    value = (os.environ if env is None else env).get(name, "")
    return value or None


def zone(name: str) -> ZoneInfo:
    """The IANA time zone ``name``; an unknown one is a UsageError with near names."""
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        near = difflib.get_close_matches(name, sorted(available_timezones()), n=3)
        hint = f"did you mean {', '.join(near)}?" if near else "use an IANA name such as Asia/Shanghai"
        raise UsageError(f"[schedule] timezone {name!r} is not a known time zone", hint=hint) from None
