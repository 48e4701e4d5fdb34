"""``planner providers`` for people: each provider's mode, what it sees, and what to set to see more."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from planner.config import Config


def render_providers(records: list[dict[str, Any]], config: Config) -> str:
    lines = []
    for r in records:
        state = "enabled" if r["enabled"] else "DISABLED (enabled = false in the config)"
        lines.append(f"{r['provider']}: {state}, {r['mode']} mode")
        lines.append(f"  sees: {r['sees']}")
        creds = ", ".join(
            f"{v} {'set' if v in r['credential_env_set'] else 'not set'}" for v in r["credential_env"]
        )
        lines.append(f"  credentials: {creds}")
        if r["to_see_more"]:
            lines.append(f"  to see more: set {' and '.join(r['to_see_more'])} in the environment")
            if r["credential_help"]:
                lines.append(f"    what to set them to: {r['credential_help']}")
        settings = [f"regions {', '.join(r['regions'])}" if r["regions"] else "default regions"]
        if r["base_url"]:
            settings.append(f"base_url {r['base_url']}")
        if "charge_types" in r:
            settings.append(f"charge types {', '.join(r['charge_types'])}")
        lines.append(f"  config: {'; '.join(settings)}")
        lines.append(f"  last refresh: {r['last_refresh'] or 'never'}")
        lines.append("")
    lines.append(
        "Set credentials in the environment only (never in config.toml); `planner refresh` reads them."
    )
    lines.append(f"Settings from: {config.sources()}")  # a ./config.toml found here is named
    return "\n".join(lines)
