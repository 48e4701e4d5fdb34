"""``planner alerts`` for people: what a check fired, and the rules and channels ``alerts list`` shows."""

from __future__ import annotations

from typing import Any

from planner.output import money, short, table


def render_check(result: Any) -> str:  # planner.alerts.check.CheckResult
    """The alerts that fired (or would), how many offers meet a rule, and what was sent."""
    from planner.alerts.check import summary_lines

    lines = [result.note] if result.note else []
    if result.fired:
        rows = [
            [
                f.rule,
                f.offer["provider"],
                f.offer["region"],
                short(f.offer["instance_type"], 28),
                f.offer["billing"],
                money(f.offer["cny_per_gpu_hour"]),
                f.offer["stock"],
                short(f.offer["reason"], 60),
            ]
            for f in result.fired
        ]
        headers = ["rule", "provider", "region", "instance", "billing", "CNY/GPU-h", "stock", "why"]
        lines += [table(rows, headers, align_right=(5,)), ""]
    holding = sum(result.holding.values())
    verb = "would fire" if result.dry_run else "fired"
    lines.append(
        f"{len(result.fired)} alert(s) {verb}; {holding} offer(s) meet a rule now, "
        f"{result.stopped} stopped meeting one."
    )
    lines += summary_lines(result)[1:]
    if result.dry_run:
        lines.append("Dry run: nothing recorded, nothing sent.")
    elif not result.deliveries:
        lines.append("Nothing to send.")
    return "\n".join(lines)


def render_rules(doc: dict[str, Any]) -> str:
    """The rules with their state, then each channel and whether what it reads is set."""
    records, channel_records = doc["rules"], doc["channels"]
    if not records and not channel_records:
        return "No alert rules. Add [[alerts]] and [channels.NAME] to your config (see config.toml)."
    rows = [
        [
            r["name"],
            r["description"],
            ", ".join(r["channels"]) or "-",
            str(r["holding_offers"]),
            str(r["pending_offers"]),
            f"{r['last_fired_at']:%Y-%m-%d %H:%M}" if r["last_fired_at"] else "never",
        ]
        for r in records
    ]
    lines = [table(rows, ["rule", "condition", "channels", "holding", "unsent", "last fired (UTC)"], (3, 4))]
    if channel_records:
        from planner.alerts.channels import CHANNELS  # the e-mail kind brings the mail stack

        lines += ["", "Channels:"]
        for c in channel_records:
            through = CHANNELS[c["kind"]].sends_through
            if through:
                lines.append(f"  {c['name']}: {c['kind']}, through {through}")
                continue
            line = f"  {c['name']}: {c['kind']}, {c['url_env']} {'set' if c['url_set'] else 'NOT SET'}"
            if c["secret_env"]:
                line += f", {c['secret_env']} {'set' if c['secret_set'] else 'not set (unsigned)'}"
            lines.append(line)
    return "\n".join(lines)
