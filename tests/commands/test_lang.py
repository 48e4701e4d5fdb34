"""``--lang`` and the locale: the commands' verdict lines in Chinese, the rest of the answer as it was,
and JSON unchanged whatever the language."""

from __future__ import annotations

import json

from tests.helpers.cli import line_of


def test_quote_says_its_verdict_in_chinese_with_lang_zh(run_cli):
    english = run_cli("quote", "--gpu", "A100", "--hours", "500")
    chinese = run_cli("--lang", "zh", "quote", "--gpu", "A100", "--hours", "500")
    assert english.exit_code == chinese.exit_code == 0, chinese.output
    verdict = line_of(chinese.stdout, "建议：")
    assert "1 个实例" in verdict and "元" in verdict and "按量付费" in verdict
    assert "Recommendation:" not in chinese.stdout and "Recommendation:" in english.stdout


def test_a_chinese_locale_is_the_default_and_the_flag_overrides_it(run_cli, monkeypatch):
    monkeypatch.setenv("LANG", "zh_CN.UTF-8")
    assert "建议：" in run_cli("quote", "--gpu", "A100", "--hours", "500").stdout
    assert "Recommendation:" in run_cli("--lang", "en", "quote", "--gpu", "A100", "--hours", "500").stdout


def test_tco_says_buy_or_rent_in_chinese(run_cli):
    result = run_cli("--lang", "zh", "tco", "--gpu", "RTX4090", "--hours", "3000")
    assert result.exit_code == 0, result.output
    verdict = line_of(result.stdout, "建议：")
    assert ("租用" in verdict or "购买" in verdict) and "盈亏平衡点" in verdict


def test_json_is_the_same_in_either_language(run_cli):
    args = ("quote", "--gpu", "A100", "--hours", "500", "--format", "json")
    english = json.loads(run_cli(*args).stdout)
    chinese = json.loads(run_cli("--lang", "zh", *args).stdout)
    assert english == chinese


def test_a_language_it_does_not_speak_is_a_usage_error(run_cli):
    result = run_cli("--lang", "fr", "quote", "--gpu", "A100", "--hours", "500")
    assert result.exit_code == 2 and "'fr' is not one of 'en', 'zh'" in result.output
