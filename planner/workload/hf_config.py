"""A model from its Hugging Face ``config.json`` (issue 27: ``--model path/to/config.json``): dense, GQA,
MoE and MLA fields, counted into the same ``ModelSpec`` the catalogue holds.

Parameters are counted from the shapes, as the checkpoint stores them (norms and biases, under 0.1%,
left out):

- embeddings vocab × hidden, and the output head again unless ``tie_word_embeddings``;
- attention per layer: GQA/MHA q, k, v, o = hidden × head_dim × (2·heads + 2·kv_heads); MLA (DeepSeek)
  the low-rank q (``q_lora_rank``), the joint KV latent (``kv_lora_rank`` + ``qk_rope_head_dim``) and its
  up-projection to every head's ``qk_nope_head_dim`` + ``v_head_dim``, and o;
- MLP per layer: 3 × hidden × intermediate (gated, SwiGLU); an MoE layer holds every routed expert
  (3 × hidden × ``moe_intermediate_size``) plus its shared experts and the router, and a token computes
  only its ``num_experts_per_tok`` experts and the shared ones. Which layers are MoE:
  ``first_k_dense_replace`` (DeepSeek, Kimi, GLM-4.5), ``decoder_sparse_step``/``mlp_only_layers``
  (Qwen-MoE), ``interleave_moe_layer_step`` (Llama 4), every layer otherwise.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from planner.errors import UsageError
from planner.workload.architectures import ModelSpec
from planner.workload.memory import ModelShape

EXPERT_KEYS = ("n_routed_experts", "num_experts", "num_local_experts", "moe_num_experts")
TOP_K_KEYS = ("num_experts_per_tok", "num_experts_per_token", "moe_top_k", "top_k")


def looks_like_config(name: str) -> bool:
    """Whether ``--model`` names a file rather than a catalogue model."""
    return name.endswith(".json") or "/" in name and Path(name).is_file()


def _first(cfg: dict[str, Any], *keys: str) -> Any:
    return next((cfg[k] for k in keys if cfg.get(k) is not None), None)


def read_config(path: str) -> ModelSpec:
    """The ModelSpec of the config at ``path``; a UsageError names what is missing or unreadable."""
    try:
        raw = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UsageError(f"no file {path}", "give the path of a model's config.json") from None
    except (OSError, ValueError) as err:
        raise UsageError(f"cannot read {path} as JSON: {err}", "give a Hugging Face config.json") from None
    if not isinstance(raw, dict):
        raise UsageError(f"{path} is not a model config", "give a Hugging Face config.json")
    return spec_from_config(raw, _name(raw, Path(path)), source=str(path))


def _name(raw: dict[str, Any], path: Path) -> str:
    """The model's name: the config's ``_name_or_path``, else its folder (as downloaded from the hub),
    else the file's name."""
    named = raw.get("_name_or_path")
    if isinstance(named, str) and named.strip("/"):
        return named.strip("/").split("/")[-1]
    if path.stem == "config":
        return path.resolve().parent.name or "config"
    return path.stem


def spec_from_config(raw: dict[str, Any], name: str, source: str = "config.json") -> ModelSpec:
    """Count a config's parameters into a ModelSpec (see the module docstring)."""
    cfg = dict(raw.get("text_config") or {}) or raw  # multimodal configs (Llama 4, Qwen2.5-VL) nest it
    if cfg is not raw:
        cfg = {**{k: v for k, v in raw.items() if k != "text_config"}, **cfg}
    need = ("num_hidden_layers", "hidden_size", "num_attention_heads", "vocab_size")
    missing = [k for k in need if not isinstance(cfg.get(k), int)]
    if missing:
        raise UsageError(
            f"the config has no {', '.join(missing)}",
            "give a decoder model's config.json (transformers format)",
        )
    layers, hidden, heads, vocab = (cfg[k] for k in need)
    kv_heads = cfg.get("num_key_value_heads") or heads
    head_dim = cfg.get("head_dim") or hidden // heads
    kv_lora = cfg.get("kv_lora_rank")
    rope = cfg.get("qk_rope_head_dim") or 0
    if kv_lora:  # MLA
        nope, v_dim = cfg.get("qk_nope_head_dim") or head_dim, cfg.get("v_head_dim") or head_dim
        q_rank = cfg.get("q_lora_rank")
        q_out = heads * (nope + rope)
        q = hidden * q_rank + q_rank * q_out if q_rank else hidden * q_out
        attention = q + hidden * (kv_lora + rope) + kv_lora * heads * (nope + v_dim) + heads * v_dim * hidden
        head_dim, attn_kind = v_dim, "mla"
    else:
        attention = hidden * head_dim * (2 * heads + 2 * kv_heads)
        attn_kind = "mha" if kv_heads == heads else "mqa" if kv_heads == 1 else "gqa"
    intermediate = cfg.get("intermediate_size") or 4 * hidden
    dense_mlp = 3 * hidden * intermediate
    experts = _first(cfg, *EXPERT_KEYS)
    top_k = _first(cfg, *TOP_K_KEYS)
    moe_layers, total_mlp, active_mlp = 0, dense_mlp * layers, dense_mlp * layers
    if experts and experts > 1:
        top_k = top_k or 2
        expert = 3 * hidden * (cfg.get("moe_intermediate_size") or intermediate)
        shared = cfg.get("n_shared_experts") or 0
        shared_params = shared * expert
        if cfg.get("shared_expert_intermediate_size"):  # Qwen-MoE: one shared expert of its own width
            shared_params = 3 * hidden * cfg["shared_expert_intermediate_size"]
        moe_layers = _moe_layer_count(cfg, layers)
        dense_layers = layers - moe_layers
        router = hidden * experts
        total_mlp = dense_layers * dense_mlp + moe_layers * (experts * expert + shared_params + router)
        active_mlp = dense_layers * dense_mlp + moe_layers * (top_k * expert + shared_params + router)
    embeddings = vocab * hidden * (1 if cfg.get("tie_word_embeddings") else 2)
    total = embeddings + layers * attention + total_mlp
    active = embeddings + layers * attention + active_mlp
    shape = ModelShape(layers, hidden, heads, kv_heads, head_dim, vocab, kv_lora, rope)
    context = cfg.get("max_position_embeddings") or cfg.get("seq_length") or 4096
    return ModelSpec(
        name=name,
        aliases=(),
        family=str(cfg.get("model_type") or "config"),
        shape=shape,
        intermediate=int(cfg.get("moe_intermediate_size") or intermediate)
        if moe_layers
        else int(intermediate),
        total_params=float(total),
        active_params=float(active),
        experts=int(experts) if moe_layers else None,
        experts_per_token=int(top_k) if moe_layers else None,
        attention=attn_kind,
        context=int(context),
        source=source,
    )


def _moe_layer_count(cfg: dict[str, Any], layers: int) -> int:
    """How many layers hold experts (see the module docstring)."""
    if cfg.get("first_k_dense_replace") is not None:
        return layers - int(cfg["first_k_dense_replace"])
    if cfg.get("interleave_moe_layer_step"):
        return layers // int(cfg["interleave_moe_layer_step"])
    only_dense = set(cfg.get("mlp_only_layers") or ())
    step = int(cfg.get("decoder_sparse_step") or 1)
    return sum(1 for i in range(layers) if i not in only_dense and (i + 1) % step == 0)
