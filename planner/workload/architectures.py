"""The model catalog: published architectures of the open models teams in China train and serve.

The data is ``planner/data/models.csv``, one row per model with the figures of its published
``config.json`` (layers, hidden size, attention and KV heads, head dim, vocabulary, experts, MLA's
``kv_lora_rank`` and ``qk_rope_head_dim``, context length) and the total and active parameter counts
its model card states, each row naming its source. ``get_spec`` resolves a name or alias ("Qwen2.5-7B",
"qwen2.5-7b-instruct", "Llama3.1-70B") and suggests near names for a typo.

    >>> get_spec("Llama-3.1-70B").shape.kv_heads
    8
    >>> get_spec("mixtral").active_params < get_spec("mixtral").total_params
    True
"""

from __future__ import annotations

import csv
import difflib
import functools
import re
from dataclasses import dataclass
from importlib import resources
from typing import Any

from planner.errors import UnknownNameError
from planner.wording import Phrase
from planner.workload.memory import ModelShape

ATTENTION_KINDS = {"mha": "MHA", "gqa": "GQA", "mqa": "MQA", "mla": "MLA"}


@dataclass(frozen=True)
class ModelSpec:
    """One catalog model. Parameters are counts (7.61e9), not billions."""

    name: str
    aliases: tuple[str, ...]
    family: str
    shape: ModelShape
    intermediate: int  # MLP width (per expert for MoE: moe_intermediate_size)
    total_params: float  # what the weights occupy
    active_params: float  # what one token computes with (= total for dense models)
    experts: int | None  # routed experts per MoE layer; None for dense models
    experts_per_token: int | None
    attention: str  # "mha", "gqa", "mqa" or "mla"
    context: int  # max_position_embeddings (or seq_length) of the config
    source: str

    @property
    def is_moe(self) -> bool:
        return bool(self.experts)

    def to_dict(self) -> dict[str, Any]:
        s = self.shape
        return {
            "name": self.name,
            "aliases": list(self.aliases),
            "family": self.family,
            "layers": s.layers,
            "hidden": s.hidden,
            "heads": s.heads,
            "kv_heads": s.kv_heads,
            "head_dim": s.head_dim,
            "intermediate": self.intermediate,
            "vocab": s.vocab,
            "total_params": self.total_params,
            "active_params": self.active_params,
            "experts": self.experts,
            "experts_per_token": self.experts_per_token,
            "attention": ATTENTION_KINDS[self.attention],
            "kv_lora_rank": s.kv_lora_rank,
            "qk_rope_head_dim": s.qk_rope_head_dim or None,
            "context": self.context,
            "source": self.source,
        }


def _opt_int(value: str) -> int | None:
    return int(value) if value else None


def _spec_from_row(row: dict[str, str]) -> ModelSpec:
    shape = ModelShape(
        layers=int(row["layers"]),
        hidden=int(row["hidden"]),
        heads=int(row["heads"]),
        kv_heads=int(row["kv_heads"]),
        head_dim=int(row["head_dim"]),
        vocab=int(row["vocab"]),
        kv_lora_rank=_opt_int(row["kv_lora_rank"]),
        qk_rope_head_dim=_opt_int(row["qk_rope_head_dim"]) or 0,
    )
    return ModelSpec(
        name=row["name"],
        aliases=tuple(a for a in row["aliases"].split("|") if a),
        family=row["family"],
        shape=shape,
        intermediate=int(row["intermediate"]),
        total_params=float(row["total_params_b"]) * 1e9,
        active_params=float(row["active_params_b"]) * 1e9,
        experts=_opt_int(row["experts"]),
        experts_per_token=_opt_int(row["experts_per_token"]),
        attention=row["attention"],
        context=int(row["context"]),
        source=row["source"],
    )


def _key(name: str) -> str:
    """Spelling-insensitive key: "Qwen2.5 7B Instruct" and "qwen2.5-7b-instruct" match; "meta-" is noise."""
    key = re.sub(r"[\s_]+", "-", name.strip().casefold())
    key = key.split("/")[-1]  # "meta-llama/Llama-3.1-70B" is how the hub names it
    return re.sub(r"^meta-(?=llama)", "", key)


@functools.cache
def _catalog() -> tuple[tuple[ModelSpec, ...], dict[str, ModelSpec]]:
    text = resources.files("planner").joinpath("data/models.csv").read_text(encoding="utf-8")
    specs = tuple(_spec_from_row(row) for row in csv.DictReader(text.splitlines()))
    by_key: dict[str, ModelSpec] = {}
    for spec in specs:
        for name in (spec.name, *spec.aliases):
            by_key[_key(name)] = spec
    return specs, by_key


def all_specs() -> list[ModelSpec]:
    """Every catalog model, in file order (grouped by family)."""
    return list(_catalog()[0])


def get_spec(name: str) -> ModelSpec:
    """The catalog model called ``name`` (or an alias); UnknownNameError with near names otherwise."""
    specs, by_key = _catalog()
    found = by_key.get(_key(name))
    if found is None:
        near = difflib.get_close_matches(_key(name), list(by_key), n=3, cutoff=0.6)
        names = list(dict.fromkeys(by_key[n].name for n in near))
        err = UnknownNameError("model", name, names)
        if not names:
            err.hint = Phrase("`planner models` lists the catalog; for another model give {params} N")
        raise err
    return found
