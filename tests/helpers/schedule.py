"""A stand-in refresh step and a team config for the scheduled job."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Outcome:
    provider: str
    status: str
    offers: int = 1
    stored: int = 1
    changed: int = 0
    seconds: float = 0.1
    error: str | None = None
    unknown_gpus: tuple[str, ...] = ()
    run_id: int | None = None


@dataclass(frozen=True)
class Summary:
    outcomes: tuple[Outcome, ...]

    @property
    def exit_code(self) -> int:
        return 1 if any(o.status == "failed" for o in self.outcomes) else 0


def fake_refresh(csv_path: Path, calls: list[str], failed: bool = False):
    """A stand-in for run_refresh that stores prices the way a refresh would (through the importer)."""

    def refresh(app):  # noqa: ANN001, ANN202
        from planner.ingest.importer import import_csv

        calls.append("refresh")
        import_csv(app.engine(), csv_path, app.config.section("fx"))
        outcomes = [Outcome("tencent", "ok")]
        if failed:
            outcomes.append(Outcome("aliyun", "failed", 0, 0, error="HTTP 503 from ecs.aliyuncs.com"))
        return Summary(tuple(outcomes))

    return refresh


def schedule_config(tmp_path: Path, **email: object) -> Path:
    lines = [
        f'[report]\nout_dir = "{tmp_path / "reports"}"',
        f'[schedule]\nlog_file = "{tmp_path / "job.log"}"',
    ]
    if email:
        lines.append("[email]")
        lines += [f"{k} = {json.dumps(v)}" for k, v in email.items()]
    path = tmp_path / "team.toml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path
