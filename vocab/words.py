"""The message catalogue: every sentence the planner says to a team, in English and Simplified Chinese.

One plain table, :data:`MESSAGES`, maps a key to its (English, Chinese) pair; :func:`say` picks one and
fills its ``{fields}``. The alert messages, the nightly digest, the report e-mail, its CSV headers, the
HTML report and the command line's verdict lines all speak through it, so a sentence lives once in both
languages, and ``tests/test_words.py`` proves that none is missing (every key has both, with the same
fields, and every key the code asks for exists).

Chinese follows the words Chinese teams use on the providers' own pages: 按量付费 (on demand), 包月
(monthly), 竞价实例 (spot), 阿里云, 腾讯云, 火山引擎.

What machines read never changes with the language: JSON keys and values, the values in CSV cells
(``on_demand``, ``sold_out``), file names and log lines stay English. Only what people read does.

Here, in ``vocab``, because ``reports`` speaks too and never imports ``planner``; this module imports
nothing of ours.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

ENGLISH = "en"
CHINESE = "zh"
LANGUAGES: tuple[str, ...] = (ENGLISH, CHINESE)

# key -> (English, 简体中文). Fields in braces are filled by ``say``; both texts name the same fields.
MESSAGES: dict[str, tuple[str, str]] = {
    # --- billing modes, as the providers' Chinese pages name them -------------------------------------
    "billing.on_demand": ("on demand", "按量付费"),
    "billing.spot": ("spot", "竞价实例"),
    "billing.daily": ("daily", "包日"),
    "billing.weekly": ("weekly", "包周"),
    "billing.monthly": ("monthly", "包月"),
    "billing.yearly": ("yearly", "包年"),
    # --- providers ------------------------------------------------------------------------------------
    "provider.aliyun": ("Aliyun", "阿里云"),
    "provider.tencent": ("Tencent Cloud", "腾讯云"),
    "provider.volcengine": ("Volcengine", "火山引擎"),
    "provider.autodl": ("AutoDL", "AutoDL"),
    "provider.ppio": ("PPIO", "PPIO 派欧云"),
    "provider.compshare": ("CompShare", "优云智算"),
    # --- stock and refresh statuses -------------------------------------------------------------------
    "stock.available": ("available", "有货"),
    "stock.low": ("low", "库存紧张"),
    "stock.sold_out": ("sold out", "售罄"),
    "stock.unknown": ("unknown", "未知"),
    "stock.not_listed": ("not listed", "已下架"),
    "status.ok": ("ok", "成功"),
    "status.partial": ("partial", "部分成功"),
    "status.failed": ("failed", "失败"),
    "status.skipped": ("skipped", "已跳过"),
    "status.running": ("running", "运行中"),
    "status.interrupted": ("interrupted", "已中断"),
    "status.never": ("never refreshed", "从未刷新"),
    # --- what a CNY-per-GPU-hour figure is (vocab.gpu_hour_basis) ---------------------------------------
    "basis.per_hour": ("{billing}, per hour", "{billing}，按小时"),
    "basis.period": ("{billing}, {hours} h a {unit}", "{billing}，每{unit} {hours} 小时"),
    "basis.for_hours": ("{billing}, for {hours} h", "{billing}，按 {hours} 小时计"),
    "unit.hour": ("hour", "小时"),
    "unit.day": ("day", "天"),
    "unit.week": ("week", "周"),
    "unit.month": ("month", "月"),
    "unit.year": ("year", "年"),
    "money.cny_per_gpu_hour": ("CNY {amount}/GPU-h", "{amount} 元/卡时"),
    "words.cny_per_gpu_hour": ("CNY/GPU-h", "元/卡时"),
    "words.list_separator": (", ", "、"),
}

_LOCALE_VARIABLES = ("LC_ALL", "LC_MESSAGES", "LANG")


def say(key: str, lang: str, /, **values: object) -> str:
    """The catalogue's sentence ``key`` in ``lang`` ("en" or "zh"), its fields filled from ``values``.

    A key or language the catalogue lacks is a bug (KeyError, ValueError), never a silent English
    fallback: the catalogue test finds it first."""
    english, chinese = MESSAGES[key]
    if lang not in LANGUAGES:
        raise ValueError(f"language {lang!r} is not one of {', '.join(LANGUAGES)}")
    return (chinese if lang == CHINESE else english).format(**values)


def word(prefix: str, value: str, lang: str) -> str:
    """The word for a value of ours in ``lang`` (``word("billing", "on_demand", "zh")`` -> 按量付费); a
    value the catalogue has no word for (a provider added later) is shown as it is."""
    key = f"{prefix}.{value}"
    return say(key, lang) if key in MESSAGES else str(value)


def language_from_environment(env: Mapping[str, str] | None = None) -> str:
    """ "zh" when the locale the user runs in is Chinese (``LC_ALL``, then ``LC_MESSAGES``, then ``LANG``,
    the first one set, as POSIX reads them: ``zh_CN.UTF-8``), else "en"."""
    env = os.environ if env is None else env
    for name in _LOCALE_VARIABLES:
        value = env.get(name, "")
        if value:
            return CHINESE if value.lower().startswith("zh") else ENGLISH
    return ENGLISH
