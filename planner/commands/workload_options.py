"""The options that describe a job, shared by ``planner estimate`` and ``planner plan``: the model (or its
parameters), the task, the tokens and how the job is run. Numbers are parsed by the option types of
``arguments.py``, so ``7B``, ``6.7e9`` and ``50K`` work and nonsense is one line with a hint (exit 2).
"""

from __future__ import annotations

import functools
from typing import Any

import click

from planner.commands.arguments import Count, Number
from planner.errors import UsageError
from planner.workload.architectures import get_spec
from planner.workload.hf_config import looks_like_config, read_config


def workload_options(tokens_required: bool):  # noqa: ANN201 - a decorator
    """The options that describe a job, shared by estimate and plan."""

    def decorate(fn):  # noqa: ANN001, ANN202
        options = [
            click.option(
                "--model",
                metavar="NAME",
                help="A catalog model (`planner models`), e.g. qwen2.5-7b, llama-3.1-70b, deepseek-v3; or the path "
                "of a Hugging Face config.json (dense, GQA, MoE, MLA).",
            ),
            click.option(
                "--params",
                type=Count("7B"),
                metavar="N",
                help="Any other model: its parameters (7B, 6.7e9, 500M); a dense model of standard shape is assumed "
                "unless --active-params makes it an MoE.",
            ),
            click.option(
                "--active-params",
                type=Count("37B"),
                metavar="M",
                help="With --params: an MoE whose tokens each compute with M parameters (--params 671B --active-params 37B).",
            ),
            click.option(
                "--experts",
                type=Count("256", whole=True),
                metavar="E",
                help="With --active-params: routed experts.",
            ),
            click.option(
                "--experts-per-token",
                type=Count("8", whole=True),
                metavar="K",
                help="With --active-params: routed experts each token uses (default 8).",
            ),
            click.option(
                "--task", required=True, metavar="TASK", help="pretrain, full, lora, qlora or inference."
            ),
            click.option(
                "--tokens",
                required=tokens_required,
                type=Count("2B"),
                metavar="D",
                help="Tokens trained on (or generated, for inference): 2B, 1.4T.",
            ),
            click.option(
                "--precision", metavar="P", help="fp32, bf16, fp16, fp8, int8 or int4 (default per task)."
            ),
            click.option(
                "--mfu",
                type=Number("0.4"),
                metavar="X",
                help="Model FLOPs utilisation in (0, 1] (default by task, GPU generation and model scale).",
            ),
            click.option(
                "--seq-len",
                type=Count("4096", whole=True),
                metavar="S",
                help="Sequence length (default 2048).",
            ),
            click.option(
                "--batch", type=Count("8", whole=True), metavar="B", help="Micro-batch in flight (default 1)."
            ),
            click.option(
                "--kv-heads",
                type=Count("8", whole=True),
                metavar="K",
                help="KV heads for the KV cache (GQA, e.g. 8); default: the model's, or one per head with --params.",
            ),
            click.option(
                "--checkpointing/--no-checkpointing",
                default=None,
                help="Gradient checkpointing (default: on for full, lora, qlora; selective recomputation for pretrain).",
            ),
            click.option(
                "--lora-rank",
                type=Count("64", whole=True),
                metavar="R",
                help="LoRA/QLoRA adapter rank on every linear layer (default 16).",
            ),
            click.option(
                "--optimizer-8bit",
                is_flag=True,
                help="8-bit Adam (bitsandbytes): optimizer states 6 instead of 12 bytes per trained parameter.",
            ),
            click.option(
                "--overhead",
                type=Number("0.1"),
                metavar="X",
                help="Restarts, evaluation and checkpointing as a share of compute time (default 0.1 pretrain, else 0).",
            ),
            click.option(
                "--zero-stage",
                type=click.IntRange(0, 3),
                metavar="S",
                help="ZeRO stage 0-3: what is split over the GPUs (default 3: weights, gradients and optimizer states).",
            ),
            click.option(
                "--cpu-offload",
                is_flag=True,
                help="ZeRO-Offload: gradients, fp32 master weights and optimizer states in CPU memory; only the "
                "16-bit weights stay on the GPU.",
            ),
            click.option(
                "--loss",
                type=click.Choice(["fused", "chunked", "plain"]),
                help="How the training loss is computed: plain (default, as Hugging Face's Trainer: 14 bytes per "
                "vocabulary entry and token), chunked (4) or fused (Liger's fused linear cross-entropy: 0).",
            ),
            click.option(
                "--pure-bf16",
                is_flag=True,
                help="Full training in bf16 without an fp32 master copy: 8 bytes per parameter instead of 16.",
            ),
            click.option(
                "--concurrency",
                type=Count("20", whole=True),
                metavar="N",
                help="Serving: N streams in flight at once (20 concurrent chats); with --task inference, instead of --tokens.",
            ),
            click.option(
                "--requests-per-s",
                type=Number("2"),
                metavar="R",
                help="Serving: R requests a second, instead of --concurrency.",
            ),
            click.option(
                "--prompt-tokens",
                type=Count("1000", whole=True),
                metavar="P",
                help="Serving: tokens in each prompt (default 1000).",
            ),
            click.option(
                "--output-tokens",
                type=Count("500", whole=True),
                metavar="O",
                help="Serving: tokens in each answer (default 500).",
            ),
            click.option(
                "--hours-per-day",
                type=Number("8"),
                metavar="H",
                help="Serving: hours online a day (default 24).",
            ),
            click.option(
                "--stream-tokens-per-s",
                type=Number("20"),
                metavar="S",
                help="Serving: the least tokens/s each stream must get (default 20).",
            ),
            click.option(
                "--network-gbps",
                type=Number("200"),
                metavar="G",
                help="Network between machines, Gbit/s per machine, for fine-tuning's communication "
                "(default 25: a cloud VPC without RDMA; an RDMA cluster is 1600-3200).",
            ),
        ]

        @functools.wraps(fn)
        def with_workload(*args: Any, **kwargs: Any) -> Any:
            given = {k: kwargs.pop(k) for k in WORKLOAD_KEYS}
            return fn(*args, workload=_workload_args(**given), **kwargs)

        command = with_workload
        for option in reversed(options):
            command = option(command)
        return command

    return decorate


SERVING_KEYS = (
    "concurrency",
    "requests_per_s",
    "prompt_tokens",
    "output_tokens",
    "hours_per_day",
    "stream_tokens_per_s",
)
WORKLOAD_KEYS = (
    "model",
    "params",
    "active_params",
    "experts",
    "experts_per_token",
    "task",
    "tokens",
    "precision",
    "mfu",
    "seq_len",
    "batch",
    "kv_heads",
    "checkpointing",
    "lora_rank",
    "optimizer_8bit",
    "overhead",
    "zero_stage",
    "cpu_offload",
    "network_gbps",
    "loss",
    "pure_bf16",
    *SERVING_KEYS,
)


def _workload_args(
    model,
    params,
    active_params,
    experts,
    experts_per_token,
    task,
    tokens,
    precision,
    mfu,
    seq_len,
    batch,
    kv_heads,
    checkpointing,
    lora_rank,
    optimizer_8bit,
    overhead,
    zero_stage,
    cpu_offload,
    network_gbps,
    loss=None,
    pure_bf16=False,
    concurrency=None,
    requests_per_s=None,
    prompt_tokens=None,
    output_tokens=None,
    hours_per_day=None,
    stream_tokens_per_s=None,
) -> dict[str, Any]:  # noqa: ANN001
    """The workload options as keyword arguments of ``planner.workload.estimate.estimate``."""
    if model is None and params is None:
        raise UsageError(
            "give --model NAME or --params N", "e.g. --model qwen2.5-7b; `planner models` lists the catalog"
        )
    if model is not None and params is not None:
        raise UsageError("give --model or --params, not both", "--model knows its parameters")
    if model is not None and looks_like_config(model):
        read_config(model)  # an unreadable or incomplete config is refused here, in one line
    elif model is not None:
        model = get_spec(model).name  # an unknown name is refused here, with near names
    return dict(
        model=model,
        params=params,
        active_params=active_params,
        experts=experts,
        experts_per_token=experts_per_token,
        task=task.strip().lower(),
        tokens=tokens,
        precision=precision.strip().lower() if precision else None,
        mfu=float(mfu) if mfu is not None else None,
        seq_len=seq_len,
        batch=batch,
        kv_heads=kv_heads,
        checkpointing=checkpointing,
        lora_rank=lora_rank,
        optimizer_8bit=optimizer_8bit,
        overhead=float(overhead) if overhead is not None else None,
        zero_stage=zero_stage,
        cpu_offload=cpu_offload,
        network_gbps=float(network_gbps) if network_gbps is not None else None,
        loss=loss,
        pure_bf16=pure_bf16,
        concurrency=concurrency,
        requests_per_s=float(requests_per_s) if requests_per_s is not None else None,
        prompt_tokens=prompt_tokens,
        output_tokens=output_tokens,
        hours_per_day=float(hours_per_day) if hours_per_day is not None else None,
        stream_tokens_per_s=float(stream_tokens_per_s) if stream_tokens_per_s is not None else None,
    )
