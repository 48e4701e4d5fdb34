"""``planner models`` for people: one row per catalog model, its size and attention."""

from __future__ import annotations

from typing import Any

from planner.output import table
from planner.units import format_count


def render_models(rows: list[dict[str, Any]]) -> str:
    body = []
    for r in rows:
        size = format_count(r["total_params"])
        if r["experts"]:
            size += f" ({format_count(r['active_params'])} active, {r['experts_per_token']}/{r['experts']} experts)"
        kv = (
            str(r["kv_heads"])
            if r["attention"] != "MLA"
            else f"latent {r['kv_lora_rank']}+{r['qk_rope_head_dim']}"
        )
        body.append([r["name"], size, str(r["layers"]), str(r["hidden"]), f"{r['heads']}", kv,
                     str(r["head_dim"]), r["attention"], f"{r['vocab']:,}", f"{r['context']:,}"])  # fmt: skip
    headers = ["model", "parameters", "layers", "hidden", "heads", "KV heads", "head dim", "attention",
               "vocab", "context"]  # fmt: skip
    return "\n".join(
        [
            table(body, headers, align_right=(2, 3, 4, 6, 8, 9)),
            f"{len(rows)} models; sources (each model's config.json) in --format json or csv. "
            "Use a name with `planner estimate --model NAME`; --params N for any other model.",
        ]
    )
