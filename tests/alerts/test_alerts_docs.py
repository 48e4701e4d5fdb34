"""The alerts documentation works when followed: each ``cat >> config.toml`` block of docs/alerts.md,
appended to a copy of the repository's own config.toml, gives a config that loads, and ``planner alerts
list`` shows the rule and its channel (the repo's file once set ``alerts = []``, which TOML refuses
beside an appended ``[[alerts]]``)."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
_APPENDED = re.compile(r"cat >> config\.toml <<'TOML'\n(.*?)\nTOML\n", re.S)


def test_following_docs_alerts_on_the_repos_config_toml_works(run_cli, tmp_path):
    blocks = _APPENDED.findall((ROOT / "docs" / "alerts.md").read_text(encoding="utf-8"))
    assert len(blocks) >= 3  # the first rule, the WeCom and the DingTalk channels
    config = tmp_path / "config.toml"
    shutil.copy(ROOT / "config.toml", config)
    with config.open("a", encoding="utf-8") as out:
        for block in blocks:
            out.write(block + "\n")
    result = run_cli("--config", str(config), "alerts", "list", "--format", "json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert [r["name"] for r in doc["rules"]] == ["cheap-h800"]
    assert {c["name"] for c in doc["channels"]} >= {"team", "ding"}
