"""Settings precedence and checking: defaults < ./config.toml < --config/PLANNER_CONFIG < env < flags."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from planner.config import load_config, packaged_defaults
from planner.errors import ConfigError

ROOT = Path(__file__).resolve().parents[2]


def test_root_config_documents_exactly_the_packaged_defaults():
    root = tomllib.loads((ROOT / "config.toml").read_text(encoding="utf-8"))
    assert root == packaged_defaults()


def test_defaults_apply_from_an_empty_folder(tmp_path):
    config = load_config(env={}, cwd=tmp_path)
    assert config.files == ()
    assert config.section("quote")["top"] == 10
    assert config.database_url.startswith("sqlite:///") and config.database_url.endswith("planner.db")


def test_precedence_local_then_named_file_then_environment(tmp_path):
    (tmp_path / "config.toml").write_text(
        '[quote]\ntop = 3\nhistory_days = 7\n[database]\nurl = "sqlite:///local.db"\n'
    )
    named = tmp_path / "team.toml"
    named.write_text("[quote]\ntop = 5\n")
    local_only = load_config(env={}, cwd=tmp_path)
    assert local_only.section("quote")["top"] == 3

    both = load_config(env={"PLANNER_CONFIG": str(named)}, cwd=tmp_path)
    assert both.section("quote") == {
        "top": 5,
        "history_days": 7,
        "price_basis": "latest",
        "scope": "mainland",
    }
    assert both.files == (str(tmp_path / "config.toml"), str(named))

    flag_file = load_config(config_file=named, env={}, cwd=tmp_path)
    assert flag_file.section("quote")["top"] == 5

    env = load_config(env={"PLANNER_DATABASE_URL": "sqlite:///env.db"}, cwd=tmp_path)
    assert env.database_url == "sqlite:///env.db"


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("[quote]\ntopp = 3\n", "unknown setting 'quote.topp'"),
        ("[qoute]\ntop = 3\n", "unknown setting 'qoute'"),
        ("[quote]\ntop = 'ten'\n", "setting 'quote.top' must be a whole number"),
        ("[snapshot]\nauto_load = 1\n", "must be true or false"),
        ("[providers.aliyun]\nregions = 'cn-beijing'\n", "must be a list of strings"),
        ("[providers.aws]\nenabled = true\n", "unknown setting 'providers.aws'"),
        ("quote = 3\n", "'quote' must be a table"),
        ("[quote\n", "is not valid TOML"),
    ],
)
def test_bad_files_are_one_line_errors(tmp_path, text, fragment):
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(ConfigError) as err:
        load_config(config_file=path, env={}, cwd=tmp_path)
    assert fragment in err.value.message
    assert str(path) in err.value.message


def test_typo_gets_a_suggestion_and_missing_file_is_reported(tmp_path):
    path = tmp_path / "c.toml"
    path.write_text("[quote]\ntopp = 3\n")
    with pytest.raises(ConfigError) as err:
        load_config(config_file=path, env={}, cwd=tmp_path)
    assert err.value.hint == "did you mean quote.top?"
    with pytest.raises(ConfigError, match="not found"):
        load_config(config_file=tmp_path / "missing.toml", env={}, cwd=tmp_path)


def test_a_float_setting_accepts_an_integer(tmp_path):
    path = tmp_path / "c.toml"
    path.write_text("[fx]\nUSD = 7\n")
    assert load_config(config_file=path, env={}, cwd=tmp_path).section("fx")["USD"] == 7


def test_cli_reports_a_bad_config_without_traceback(runner, tmp_path):
    from planner.cli import cli

    path = tmp_path / "c.toml"
    path.write_text("[quote]\ntop = 'ten'\n")
    result = runner.invoke(cli, ["--config", str(path), "quote", "--gpu", "A100", "--hours", "5"])
    assert result.exit_code == 2
    assert "must be a whole number" in result.stderr
    assert "Traceback" not in result.output
