"""A ``./config.toml`` in the working folder is loaded, so it is named wherever settings matter
(``planner providers``, the refresh's progress and the scheduler's log); and a plain-http ``base_url``
never receives a provider's credentials, unless it is on this machine or the user opts in with
``[providers.<name>] allow_plain_http = true``."""

from __future__ import annotations

import pytest

from planner.config import load_config, plain_http_refused
from tests.helpers.cli import line_of
from tests.helpers.replay import make_config, outcome, refresh


def test_planted_config_is_named_by_providers_and_refresh(run_cli, tmp_path):
    workdir = tmp_path / "cwd"
    workdir.mkdir(exist_ok=True)
    (workdir / "config.toml").write_text("[providers.tencent]\nenabled = false\n", encoding="utf-8")
    shown = run_cli("providers")
    assert shown.exit_code == 0, shown.output
    settings = line_of(shown.stdout, "Settings from:")
    assert f"packaged defaults, {workdir / 'config.toml'} " in settings and "current folder" in settings
    refreshed = run_cli("refresh", "--provider", "tencent")
    assert "(found in the current folder)" in refreshed.stderr


def test_config_sources_say_defaults_only_when_no_file_was_read(tmp_path):
    assert load_config(env={}, cwd=tmp_path).sources() == "packaged defaults"


@pytest.mark.parametrize(
    "base_url, allow, sends, refused",
    [
        ("http://203.0.113.7:8080", False, True, True),
        ("http://proxy.example.com", False, True, True),
        ("http://203.0.113.7:8080", True, True, False),  # the user opted in
        ("http://127.0.0.1:8080", False, True, False),  # loopback: never leaves the machine
        ("http://[::1]:8080", False, True, False),
        ("http://localhost:8080", False, True, False),
        ("https://proxy.example.com", False, True, False),
        ("http://proxy.example.com", False, False, False),  # public mode: no credentials to send
    ],
)
def test_plain_http_base_url_rule(base_url, allow, sends, refused):
    section = {"base_url": base_url, "allow_plain_http": allow}
    assert (plain_http_refused("autodl", section, sends) is not None) is refused


def test_plain_http_base_url_gets_no_credentials(engine, tmp_path, monkeypatch):
    import requests

    sent: list[str] = []
    monkeypatch.setattr(requests.Session, "request", lambda self, method, url, **kw: sent.append(url))
    config = make_config(tmp_path, providers={"autodl": {"base_url": "http://203.0.113.7:8080"}})
    summary = refresh(
        engine, tmp_path, config, providers=["autodl"], env={"AUTODL_TOKEN": "tok-abcdef-123456"}
    )
    autodl = outcome(summary, "autodl")
    assert autodl.status == "failed" and "plain http to 203.0.113.7" in autodl.error
    assert "allow_plain_http = true" in autodl.error
    assert sent == []  # nothing went out, the token least of all


WEAKENING_FILES = {
    "plain-http provider": '[providers.autodl]\nallow_plain_http = true\nbase_url = "http://203.0.113.7"\n',
    "https base_url to any host": '[providers.aliyun]\nbase_url = "https://prices.attacker.example"\n',
    "plain-http webhook": '[channels.team]\nkind = "wecom"\nallow_plain_http = true\n',
    "plain SMTP login": "[email]\nallow_plain_login = true\n",
}


@pytest.mark.parametrize("text", WEAKENING_FILES.values(), ids=WEAKENING_FILES.keys())
def test_a_config_found_in_the_working_folder_cannot_weaken_security(tmp_path, text):
    from planner.errors import ConfigError

    (tmp_path / "config.toml").write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load_config(env={}, cwd=tmp_path)
    assert "weakens security" in caught.value.message and "current folder" in caught.value.message
    # named, it is the user's choice
    named = load_config(config_file=tmp_path / "config.toml", env={}, cwd=tmp_path)
    assert named.files == (str(tmp_path / "config.toml"),) and named.local_file is None
    assert load_config(env={"PLANNER_CONFIG": str(tmp_path / "config.toml")}, cwd=tmp_path).files


def test_a_working_folder_config_may_keep_the_safe_values_and_change_the_rest(tmp_path):
    (tmp_path / "config.toml").write_text(
        '[providers.aliyun]\nbase_url = ""\nallow_plain_http = false\nregions = ["cn-beijing"]\n'
        "[email]\nallow_plain_login = false\nsmtp_port = 465\n",
        encoding="utf-8",
    )
    config = load_config(env={}, cwd=tmp_path)
    assert (
        config.provider("aliyun")["regions"] == ["cn-beijing"] and config.section("email")["smtp_port"] == 465
    )


def test_planner_names_the_setting_and_how_to_trust_the_file(run_cli, tmp_path):
    workdir = tmp_path / "cwd"
    workdir.mkdir(exist_ok=True)
    (workdir / "config.toml").write_text(WEAKENING_FILES["https base_url to any host"], encoding="utf-8")
    refused = run_cli("providers")
    assert refused.exit_code == 2, refused.output
    assert "providers.aliyun.base_url" in refused.stderr and "--config" in refused.stderr
    trusted = run_cli("--config", str(workdir / "config.toml"), "providers")
    assert trusted.exit_code == 0, trusted.output
