"""Alert rules (``[[alerts]]``) and channels (``[channels.NAME]``) read from the settings and checked.

A rule names a GPU (a model or a family, as ``--gpu`` takes it; China variants only when named; left
out, every GPU),
optionally a provider, region and billing mode, exactly one condition and the channels to tell. Every
mistake is one ``ConfigError`` line naming the rule and the key, with a hint.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from planner import catalog
from planner.alerts.channels import CHANNELS, add_channel_hint
from planner.alerts.channels.base import Channel
from planner.billing import canonical_billing
from planner.config import Config
from planner.errors import ConfigError, UsageError
from planner.providers import canonical_provider
from vocab.words import ENGLISH, named, say

# The conditions, one per rule. drop_percent goes with window_days (default 7).
CONDITIONS = ("below_cny_per_gpu_hour", "drop_percent", "idle_gpus_at_least", "back_in_stock", "new_offers")
RULE_KEYS = ("name", "gpu", "provider", "region", "billing", "channels", "window_days", *CONDITIONS)
DEFAULT_WINDOW_DAYS = 7
MAX_NAME_CHARS = 64

CHANNEL_KEYS = ("kind", *dict.fromkeys(key for kind in CHANNELS.values() for key in kind.keys))
_CHANNEL_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_-]{0,31}$")


@dataclass(frozen=True)
class Rule:
    """One checked alert rule. Exactly one of the condition fields is set."""

    name: str
    gpu: str  # as written; "" = every GPU
    gpu_models: tuple[str, ...]  # the catalog models it means; () = every GPU
    provider: str | None
    region: str | None
    billing: str | None
    condition: str  # one of CONDITIONS
    channels: tuple[str, ...]
    below_cny_per_gpu_hour: Decimal | None = None
    drop_percent: Decimal | None = None
    window_days: int = DEFAULT_WINDOW_DAYS
    idle_gpus_at_least: int | None = None

    def describe(self, lang: str = ENGLISH) -> str:
        """The condition in words: ``H800 under 9 CNY/GPU-h`` (``lang`` "zh": ``H800 低于 9 元/卡时``)."""
        parts = (
            self.provider and named("provider", self.provider, lang),
            self.region,
            self.billing and named("billing", self.billing, lang),
        )
        scope = (self.gpu or say("rule.any_gpu", lang)) + "".join(f" {v}" for v in parts if v)
        if self.condition == "below_cny_per_gpu_hour":
            return say("rule.below", lang, scope=scope, limit=plain(self.below_cny_per_gpu_hour))
        if self.condition == "drop_percent":
            return say(
                "rule.drop", lang, scope=scope, percent=plain(self.drop_percent), days=self.window_days
            )
        if self.condition == "idle_gpus_at_least":
            return say("rule.idle", lang, scope=scope, wanted=self.idle_gpus_at_least)
        if self.condition == "back_in_stock":
            return say("rule.back_in_stock", lang, scope=scope)
        return say("rule.new", lang, scope=scope)

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "gpu": self.gpu,
            "gpu_models": list(self.gpu_models),
            "provider": self.provider,
            "region": self.region,
            "billing": self.billing,
            "condition": self.condition,
            "description": self.describe(),
            "channels": list(self.channels),
        }


def plain(value: Decimal | None) -> str:
    """``Decimal("9.0")`` -> ``9``, ``Decimal("2.20")`` -> ``2.2``: a threshold as the user wrote it."""
    return "-" if value is None else f"{value.normalize():f}"


def load_channels(config: Config) -> dict[str, Channel]:
    """The ``[channels.NAME]`` tables, checked."""
    raw = config.data.get("channels", {})
    if not isinstance(raw, Mapping):
        raise ConfigError("[channels] must be a table of [channels.NAME] tables")
    out: dict[str, Channel] = {}
    for name, table in raw.items():
        where = f"channel {name!r}"
        if not _CHANNEL_NAME.match(name):
            raise ConfigError(
                f"{where}: the name must start with a letter and hold only letters, digits, _ and - "
                "(at most 32)",
                hint="it becomes part of PLANNER_WEBHOOK_<NAME>",
            )
        if not isinstance(table, Mapping):
            raise ConfigError(f"{where} must be a table ([channels.{name}])")
        _no_unknown_keys(table, CHANNEL_KEYS, where)
        kind = table.get("kind")
        kind = kind.strip().lower() if isinstance(kind, str) else kind  # "WeCom" is fine too
        if kind not in CHANNELS:
            raise ConfigError(
                f"{where}: kind must be one of {', '.join(CHANNELS)}, got {kind!r}",
                hint=_near(str(kind), list(CHANNELS)) or f'e.g. kind = "{next(iter(CHANNELS))}"',
            )
        for key in table:
            if key != "kind" and key not in CHANNELS[kind].keys:
                takers = " or ".join(f'kind = "{k.name}"' for k in CHANNELS.values() if key in k.keys)
                raise ConfigError(f"{where}: {key} is for {takers} only", hint="remove it")
        out[name] = Channel(name, kind, **CHANNELS[kind].settings(table, where))
    return out


def load_rules(config: Config, channels: Mapping[str, Channel] | None = None) -> list[Rule]:
    """The ``[[alerts]]`` rules, checked against the GPU catalog, providers, billing modes and channels."""
    channels = load_channels(config) if channels is None else channels
    raw = config.data.get("alerts", [])
    if not isinstance(raw, list):
        raise ConfigError("alerts must be a list of [[alerts]] tables", hint="write each rule as [[alerts]]")
    rules: list[Rule] = []
    seen: set[str] = set()
    for index, table in enumerate(raw, 1):
        if not isinstance(table, Mapping):
            raise ConfigError(f"alert #{index} must be a table ([[alerts]])")
        rule = _rule(table, index, channels)
        if rule.name in seen:
            raise ConfigError(f"alert {rule.name!r}: name is used twice", hint="give every rule its own name")
        seen.add(rule.name)
        rules.append(rule)
    return rules


def _rule(table: Mapping[str, Any], index: int, channels: Mapping[str, Channel]) -> Rule:
    name = table.get("name")
    if not isinstance(name, str) or not name.strip():
        raise ConfigError(f"alert #{index}: name is missing", hint='add name = "cheap-h800" (unique)')
    name = name.strip()
    where = f"alert {name!r}"
    if len(name) > MAX_NAME_CHARS:
        raise ConfigError(f"{where}: name is longer than {MAX_NAME_CHARS} characters")
    _no_unknown_keys(table, RULE_KEYS, where)
    gpu = table.get("gpu", "")
    if not isinstance(gpu, str) or ("gpu" in table and not gpu.strip()):
        raise ConfigError(
            f"{where}: gpu must be a GPU model or family", hint='e.g. gpu = "H800", or leave it out'
        )
    models = _gpu_models(gpu, where) if gpu.strip() else ()  # none named: every GPU
    provider = _optional_name(table, "provider", where)
    region = _optional_name(table, "region", where)
    billing = _optional_name(table, "billing", where)
    if provider is not None:
        provider = _canonical(canonical_provider, provider, where, "provider")
    if billing is not None:
        billing = _canonical(canonical_billing, billing, where, "billing")
    present = [c for c in CONDITIONS if c in table]
    if len(present) != 1:
        said = f"it has {', '.join(present)}" if present else "it has none"
        raise ConfigError(
            f"{where}: needs exactly one condition ({said})",
            hint=f"one of {', '.join(CONDITIONS)}",
        )
    condition = present[0]
    if "window_days" in table and condition != "drop_percent":
        raise ConfigError(f"{where}: window_days goes with drop_percent only", hint="remove window_days")
    kw: dict[str, Any] = {}
    value = table[condition]
    if condition == "below_cny_per_gpu_hour":
        kw[condition] = _number(value, where, condition, low=0, high=10_000, low_open=True)
    elif condition == "drop_percent":
        kw[condition] = _number(value, where, condition, low=0, high=100, low_open=True, high_open=True)
        kw["window_days"] = int(
            _number(table.get("window_days", DEFAULT_WINDOW_DAYS), where, "window_days", 1, 365, whole=True)
        )
    elif condition == "idle_gpus_at_least":
        kw[condition] = int(_number(value, where, condition, 1, 100_000, whole=True))
    elif value is not True:
        raise ConfigError(
            f"{where}: {condition} must be true, got {value!r}", hint="set it to true or remove it"
        )
    wanted = table.get("channels", [])
    if not isinstance(wanted, list) or not all(isinstance(c, str) for c in wanted):
        raise ConfigError(
            f"{where}: channels must be a list of channel names", hint='e.g. channels = ["team"]'
        )
    for channel in wanted:
        if channel not in channels:
            near = _near(channel, list(channels))
            raise ConfigError(
                f"{where}: channels names {channel!r}, which is not a [channels.{channel}] table",
                hint=near or add_channel_hint(channel),
            )
    return Rule(
        name=name,
        gpu=gpu.strip(),
        gpu_models=models,
        provider=provider,
        region=region,
        billing=billing,
        condition=condition,
        channels=tuple(dict.fromkeys(wanted)),
        **kw,
    )


def _gpu_models(gpu: str, where: str) -> tuple[str, ...]:
    try:
        return tuple(s.model.name for s in catalog.resolve_query(gpu.strip(), include_variants=False))
    except UsageError as err:
        raise ConfigError(f"{where}: gpu {gpu!r}: {err.message}", hint=err.hint) from None


def _canonical(func: Any, value: str, where: str, key: str) -> str:
    try:
        return str(func(value))
    except UsageError as err:
        raise ConfigError(f"{where}: {key} {value!r}: {err.message}", hint=err.hint) from None


def _optional_name(table: Mapping[str, Any], key: str, where: str) -> str | None:
    value = table.get(key)
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(f"{where}: {key} must be a non-empty string, got {value!r}", hint="or leave it out")
    return value.strip()


def _number(
    value: Any,
    where: str,
    key: str,
    low: float,
    high: float,
    *,
    whole: bool = False,
    low_open: bool = False,
    high_open: bool = False,
) -> Decimal:
    ok_type = isinstance(value, int) if whole else isinstance(value, int | float)
    if isinstance(value, bool) or not ok_type:
        kind = "a whole number" if whole else "a number"
        raise ConfigError(f"{where}: {key} must be {kind}, got {value!r}")
    number = Decimal(str(value))
    too_low = number <= low if low_open else number < low
    too_high = number >= high if high_open else number > high
    if number.is_nan() or too_low or too_high:
        left, right = "(" if low_open else "[", ")" if high_open else "]"
        raise ConfigError(f"{where}: {key} must be in {left}{low:g}, {high:g}{right}, got {value!r}")
    return number


def _no_unknown_keys(table: Mapping[str, Any], known: Sequence[str], where: str) -> None:
    for key in table:
        if key not in known:
            raise ConfigError(
                f"{where}: unknown key {key!r}", hint=_near(key, known) or f"known keys: {', '.join(known)}"
            )


def _near(word: str, choices: Sequence[str]) -> str | None:
    starts = [c for c in choices if word and c.startswith(word)]  # "below_cny" for below_cny_per_gpu_hour
    near = starts[:1] or difflib.get_close_matches(word, list(choices), n=1, cutoff=0.5)
    return f"did you mean {near[0]!r}?" if near else None
