"""``planner models``: the model catalog that ``--model`` takes, each model's published architecture."""

from __future__ import annotations

import difflib

import click

from planner.commands.emit import emit
from planner.commands.options import format_option
from planner.errors import UnknownNameError
from planner.views.models import render_models
from planner.workload.architectures import all_specs

MODEL_COLUMNS = (
    "name", "family", "total_params", "active_params", "experts", "experts_per_token", "layers", "hidden",
    "heads", "kv_heads", "head_dim", "attention", "kv_lora_rank", "qk_rope_head_dim", "intermediate",
    "vocab", "context", "aliases", "source",
)  # fmt: skip


@click.command()
@click.option("--family", metavar="NAME", help="Only this family, e.g. Qwen3, DeepSeek, Llama.")
@format_option
def models(family, fmt) -> None:  # noqa: ANN001
    """The model catalog for --model: each model's published architecture and its source.

    Layers, hidden size, attention and KV heads, head dim, vocabulary, total and active parameters,
    experts (MoE), attention type (MHA, GQA, MQA, MLA with its KV latent and RoPE dims) and context
    length, from each model's published config.json (or paper). Any name or alias works with
    `estimate --model` and `plan --model`; for a model not listed, use --params.

    \b
    Examples:
      planner models
      planner models --family Qwen3
      planner models --format json
      planner estimate --model qwen3-30b-a3b --task inference --gpu L20
    """
    specs = all_specs()
    if family:
        families = sorted({s.family for s in specs})
        specs = [s for s in specs if s.family.casefold() == family.strip().casefold()]
        if not specs:
            near = difflib.get_close_matches(family, families, n=3, cutoff=0.4) or families
            raise UnknownNameError("model family", family, near)
    emit(
        [s.to_dict() for s in specs],
        fmt,
        table=render_models,
        csv=lambda rows: ([r | {"aliases": "|".join(r["aliases"])} for r in rows], MODEL_COLUMNS),
    )
