"""Golden output of ``planner.views.providers``: one provider in account mode, one short of credentials."""

from __future__ import annotations

from pathlib import Path

from planner.config import load_config
from planner.views.providers import render_providers


def test_providers_render_as_before(tmp_path: Path):
    records = [
        {
            "provider": "tencent", "enabled": True, "mode": "account", "sees": "every region's list prices",
            "credential_env": ["TENCENTCLOUD_SECRET_ID", "TENCENTCLOUD_SECRET_KEY"],
            "credential_env_set": ["TENCENTCLOUD_SECRET_ID", "TENCENTCLOUD_SECRET_KEY"],
            "to_see_more": [], "credential_help": None, "regions": ["ap-beijing", "ap-shanghai"],
            "base_url": None, "last_refresh": "2026-11-30 02:01 UTC ok",
        },
        {
            "provider": "autodl", "enabled": False, "mode": "public", "sees": "public listings only",
            "credential_env": ["AUTODL_TOKEN"], "credential_env_set": [], "to_see_more": ["AUTODL_TOKEN"],
            "credential_help": "the token of your AutoDL account's developer page", "regions": [],
            "base_url": "https://example.test", "charge_types": ["payg", "daily"], "last_refresh": None,
        },
    ]  # fmt: skip
    assert render_providers(records, load_config(env={}, cwd=tmp_path)) == PROVIDERS


# What the views printed before they moved out of planner/commands/, byte for byte.
PROVIDERS = """\
tencent: enabled, account mode
  sees: every region's list prices
  credentials: TENCENTCLOUD_SECRET_ID set, TENCENTCLOUD_SECRET_KEY set
  config: regions ap-beijing, ap-shanghai
  last refresh: 2026-11-30 02:01 UTC ok

autodl: DISABLED (enabled = false in the config), public mode
  sees: public listings only
  credentials: AUTODL_TOKEN not set
  to see more: set AUTODL_TOKEN in the environment
    what to set them to: the token of your AutoDL account's developer page
  config: default regions; base_url https://example.test; charge types payg, daily
  last refresh: never

Set credentials in the environment only (never in config.toml); `planner refresh` reads them.
Settings from: packaged defaults"""
