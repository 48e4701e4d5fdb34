"""The message catalogue (``vocab.words``): every sentence in both languages, with the same fields, and
every key the code asks for present, so no message falls back to a missing string."""

from __future__ import annotations

import re
import string
from pathlib import Path

import pytest

from planner.config import language, load_config, with_language
from vocab.words import CHINESE, ENGLISH, LANGUAGES, MESSAGES, language_from_environment, say, word

ROOT = Path(__file__).resolve().parents[2]
# say("key", ...) and word("prefix", ...) as the code writes them; a key built at run time is listed
# by its prefix (word) or written out where it is built.
_SAY = re.compile(r"""\bsay\(\s*["']([a-z0-9_.]+)["']""")
_WORD = re.compile(r"""\bword\(\s*["']([a-z0-9_]+)["']""")


def _fields(text: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(text) if name is not None}


def _sources() -> list[Path]:
    return [
        p
        for folder in ("planner", "reports", "vocab", "db", "scrapers")
        for p in (ROOT / folder).rglob("*.py")
    ]


@pytest.mark.parametrize("key", sorted(MESSAGES))
def test_every_sentence_is_in_both_languages_with_the_same_fields(key):
    english, chinese = MESSAGES[key]
    if key.startswith("words.") and key.endswith(("_gap", "_separator")):
        assert english or chinese, key  # a separator may be nothing in one language (no space in Chinese)
    else:
        assert english.strip() and chinese.strip(), key
    assert _fields(english) == _fields(chinese), key


def test_every_key_the_code_asks_for_is_in_the_catalogue():
    asked: dict[str, str] = {}
    prefixes: dict[str, str] = {}
    for path in _sources():
        text = path.read_text(encoding="utf-8")
        for key in _SAY.findall(text):
            asked.setdefault(key, str(path.relative_to(ROOT)))
        for prefix in _WORD.findall(text):
            prefixes.setdefault(prefix, str(path.relative_to(ROOT)))
    missing = {key: where for key, where in asked.items() if key not in MESSAGES}
    assert not missing, missing
    known_prefixes = {key.split(".")[0] for key in MESSAGES}
    assert not {p: w for p, w in prefixes.items() if p not in known_prefixes}
    assert len(asked) >= 100  # the scan found the code's calls (a broken pattern would pass vacuously)


def test_the_words_chinese_teams_use():
    assert word("billing", "on_demand", CHINESE) == "按量付费"
    assert word("billing", "monthly", CHINESE) == "包月"
    assert word("billing", "spot", CHINESE) == "竞价实例"
    assert [word("provider", p, CHINESE) for p in ("aliyun", "tencent", "volcengine")] == [
        "阿里云",
        "腾讯云",
        "火山引擎",
    ]
    assert word("billing", "monthly", ENGLISH) == "monthly"
    assert word("provider", "newcloud", CHINESE) == "newcloud"  # a name without a word stays itself


def test_a_sentence_fills_its_fields_in_either_language():
    assert say("money.cny_per_gpu_hour", ENGLISH, amount="1.88") == "CNY 1.88/GPU-h"
    assert say("money.cny_per_gpu_hour", CHINESE, amount="1.88") == "1.88 元/卡时"
    with pytest.raises(ValueError):
        say("money.cny_per_gpu_hour", "fr", amount="1")


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({"LANG": "zh_CN.UTF-8"}, "zh"),
        ({"LANG": "en_US.UTF-8"}, "en"),
        ({"LANG": "en_US.UTF-8", "LC_ALL": "zh_CN.UTF-8"}, "zh"),
        ({"LC_MESSAGES": "zh_TW.UTF-8", "LANG": "C"}, "zh"),
        ({}, "en"),
        ({"LANG": "C.UTF-8"}, "en"),
    ],
)
def test_the_default_language_comes_from_the_locale(env, expected):
    assert language_from_environment(env) == expected


def test_the_setting_beats_the_locale_and_the_flag_beats_the_setting(tmp_path):
    (tmp_path / "config.toml").write_text('[locale]\nlanguage = "en"\n', encoding="utf-8")
    config = load_config(cwd=tmp_path, env={})
    assert language(config, env={"LANG": "zh_CN.UTF-8"}) == ENGLISH
    assert language(with_language(config, "zh"), env={}) == CHINESE
    assert language(load_config(cwd=tmp_path / "none", env={}), env={"LANG": "zh_CN.UTF-8"}) == CHINESE


def test_a_language_the_planner_does_not_speak_is_refused_in_one_line(tmp_path):
    from planner.errors import ConfigError

    (tmp_path / "config.toml").write_text('[locale]\nlanguage = "fr"\n', encoding="utf-8")
    with pytest.raises(ConfigError, match=r"'locale.language' must be '' or 'en' or 'zh'"):
        load_config(cwd=tmp_path, env={})
    assert LANGUAGES == ("en", "zh")


def test_a_message_names_our_values_as_stored_in_english_and_in_the_teams_words_otherwise():
    from vocab.words import named

    assert named("provider", "aliyun", ENGLISH) == "aliyun"  # what English messages always said
    assert named("billing", "on_demand", ENGLISH) == "on_demand"
    assert named("provider", "aliyun", CHINESE) == "阿里云"
    assert named("status", "failed", CHINESE) == "失败"
    assert named("provider", "newcloud", CHINESE) == "newcloud"
