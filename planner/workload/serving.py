"""Serving is uptime, not tokens (issue 27): a chatbot kept online for some hours a day for a number of
concurrent users, sized by memory and by throughput.

The load is ``concurrency`` streams in flight (or ``requests_per_s``, turned into streams by Little's
law: each request holds a stream for output_tokens ÷ the per-stream speed), each prompt of
``prompt_tokens`` and answer of ``output_tokens``, online ``hours_per_day``. Every stream must be
served at least ``stream_tokens_per_s`` (default 20 tokens/s: faster than people read, the pace chat
services aim for; assumption). Serving it takes replicas of the model, each on the fewest GPUs that
hold its weights and the KV cache of its streams at full context (``planner.workload.estimate``), each
fast enough once prefill's share of its time is taken out: prompts arrive at prompt ÷ output times
the output rate and are processed at the prefill speed. The answer is the fewest GPUs in all
(replicas × GPUs per replica), and the tokens a month they produce at that load.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from planner.billing import HOURS_PER_MONTH
from planner.errors import QuantityError, UsageError
from planner.wording import Phrase

if TYPE_CHECKING:  # pragma: no cover
    from planner.workload.estimate import Estimate

DEFAULT_PROMPT_TOKENS = 1000  # assumption: a chat turn with some history
DEFAULT_OUTPUT_TOKENS = 500
DEFAULT_HOURS_PER_DAY = 24.0
DEFAULT_STREAM_TOKENS_PER_S = 20.0  # assumption: the per-user speed a chat service aims for
MAX_CONCURRENCY = 1_000_000
MAX_STREAMS_PER_REPLICA = 4096  # vLLM's max_num_seqs is 256 by default; beyond this nobody batches
DAYS_PER_MONTH = HOURS_PER_MONTH / 24  # 30.4


@dataclass(frozen=True)
class ServingLoad:
    """What a service must keep up with (see the module docstring)."""

    concurrency: int | None = None
    requests_per_s: float | None = None
    prompt_tokens: int = DEFAULT_PROMPT_TOKENS
    output_tokens: int = DEFAULT_OUTPUT_TOKENS
    hours_per_day: float = DEFAULT_HOURS_PER_DAY
    stream_tokens_per_s: float = DEFAULT_STREAM_TOKENS_PER_S

    def __post_init__(self) -> None:
        if (self.concurrency is None) == (self.requests_per_s is None):
            raise UsageError(
                Phrase("a serving load is {concurrency} or {requests_per_s}, one of them"),
                Phrase("e.g. {concurrency} 20 for 20 chats at once"),
            )
        if self.concurrency is not None and not 1 <= self.concurrency <= MAX_CONCURRENCY:
            raise QuantityError("concurrency", f"must be from 1 to {MAX_CONCURRENCY:,}", "20")
        if self.requests_per_s is not None and not 0 < self.requests_per_s <= 1e5:
            raise QuantityError("requests_per_s", "must be more than 0 and at most 100,000", "2")
        for name, value, top in (("prompt_tokens", self.prompt_tokens, 10_000_000),
                                 ("output_tokens", self.output_tokens, 1_000_000)):  # fmt: skip
            if not 1 <= value <= top:
                raise QuantityError(name, f"must be from 1 to {top:,}", "1000")
        if not 0 < self.hours_per_day <= 24:
            raise QuantityError(
                "hours_per_day", f"must be more than 0 and at most 24, got {self.hours_per_day:g}", "8"
            )
        if not 0 < self.stream_tokens_per_s <= 10_000:
            raise QuantityError("stream_tokens_per_s", "must be more than 0 and at most 10,000", "20")

    @property
    def streams(self) -> int:
        """Streams in flight: the concurrency, or requests/s × seconds each holds a stream (Little's law)."""
        if self.concurrency is not None:
            return self.concurrency
        assert self.requests_per_s is not None
        return max(1, math.ceil(self.requests_per_s * self.output_tokens / self.stream_tokens_per_s))

    @property
    def output_tokens_per_s(self) -> float:
        if self.requests_per_s is not None:
            return self.requests_per_s * self.output_tokens
        return self.streams * self.stream_tokens_per_s

    @property
    def prompt_tokens_per_s(self) -> float:
        return self.output_tokens_per_s * self.prompt_tokens / self.output_tokens

    @property
    def context(self) -> int:
        """Tokens a stream's KV cache holds at the end of an answer."""
        return self.prompt_tokens + self.output_tokens

    @property
    def online_hours_per_month(self) -> float:
        return self.hours_per_day * DAYS_PER_MONTH

    def tokens_per_month(self) -> tuple[float, float]:
        """(output tokens, prompt tokens) a month at this load."""
        seconds = self.online_hours_per_month * 3600
        return self.output_tokens_per_s * seconds, self.prompt_tokens_per_s * seconds

    def describe(self) -> str:
        who = (
            f"{self.concurrency:,} concurrent streams"
            if self.concurrency is not None
            else f"{self.requests_per_s:g} requests/s ({self.streams:,} streams in flight)"
        )
        return (
            f"{who} at ≥ {self.stream_tokens_per_s:g} tokens/s each, prompts of {self.prompt_tokens:,} and "
            f"answers of {self.output_tokens:,} tokens, {self.hours_per_day:g} h online a day "
            f"({self.online_hours_per_month:,.0f} h a month)"
        )


@dataclass(frozen=True)
class ServingSize:
    """The fewest GPUs of one model that serve a load: replicas × GPUs per replica."""

    load: ServingLoad
    gpu: str
    replicas: int
    gpus_per_replica: int
    streams_per_replica: int
    stream_tokens_per_s: float  # each stream's speed, prefill's share of the time taken out
    prefill_share: float  # share of each replica's time spent on prompts
    replica: Estimate  # one replica: memory, layout, decode speed at its batch

    @property
    def gpus(self) -> int:
        return self.replicas * self.gpus_per_replica

    @property
    def gpu_hours_per_month(self) -> float:
        return self.gpus * self.load.online_hours_per_month

    def cny_per_million_tokens(self, cny_per_month: float) -> tuple[float, float]:
        """(CNY per million output tokens, per million tokens prompt and output together)."""
        output, prompt = self.load.tokens_per_month()
        return cny_per_month / output * 1e6, cny_per_month / (output + prompt) * 1e6

    def to_dict(self) -> dict[str, Any]:
        output, prompt = self.load.tokens_per_month()
        return {
            "concurrency": self.load.concurrency,
            "requests_per_s": self.load.requests_per_s,
            "streams": self.load.streams,
            "prompt_tokens": self.load.prompt_tokens,
            "output_tokens": self.load.output_tokens,
            "hours_per_day": self.load.hours_per_day,
            "min_stream_tokens_per_s": self.load.stream_tokens_per_s,
            "gpu": self.gpu,
            "gpus": self.gpus,
            "replicas": self.replicas,
            "gpus_per_replica": self.gpus_per_replica,
            "streams_per_replica": self.streams_per_replica,
            "stream_tokens_per_s": self.stream_tokens_per_s,
            "prefill_share": self.prefill_share,
            "replica_memory_gb": self.replica.memory_gb,
            "online_hours_per_month": self.load.online_hours_per_month,
            "gpu_hours_per_month": self.gpu_hours_per_month,
            "output_tokens_per_month": output,
            "prompt_tokens_per_month": prompt,
        }


def size_serving(on: Callable[[int], Estimate], load: ServingLoad, gpu: str) -> ServingSize | str:
    """The fewest GPUs that serve ``load``, or why none can. ``on(batch)`` is the inference estimate of
    one replica holding ``batch`` streams at ``load.context`` tokens, on its fewest GPUs."""
    one = _replica(on, load, gpu, 1, 1)
    if isinstance(one, str):
        return one
    if one.stream_tokens_per_s < load.stream_tokens_per_s:
        return (
            f"one stream on {one.gpus_per_replica} × {gpu} runs at {one.stream_tokens_per_s:,.1f} tokens/s, "
            f"below the {load.stream_tokens_per_s:g} asked"
        )
    streams, floor = load.streams, one.gpus_per_replica
    best: ServingSize | None = None
    last_batch = 0
    for replicas in range(1, streams + 1):
        if best is not None and replicas * floor >= best.gpus:
            break
        batch = math.ceil(streams / replicas)
        if batch > MAX_STREAMS_PER_REPLICA or batch == last_batch:
            continue
        last_batch = batch
        size = _replica(on, load, gpu, replicas, batch)
        if isinstance(size, ServingSize) and size.stream_tokens_per_s >= load.stream_tokens_per_s:
            if best is None or size.gpus < best.gpus:
                best = size
    return (
        best
        if best is not None
        else f"no split of {gpu} keeps every stream at {load.stream_tokens_per_s:g} tokens/s"
    )


def _replica(
    on: Callable[[int], Estimate], load: ServingLoad, gpu: str, replicas: int, batch: int
) -> ServingSize | str:
    e = on(batch)
    if e.gpus_needed is None:
        return f"no count of {gpu} holds the model"
    if not e.tokens_per_gpu_s or not e.prefill_tokens_per_gpu_s:
        return f"the catalog has no speed figures for {gpu}"
    g = e.gpus_needed
    decode = e.tokens_per_gpu_s * g / batch  # tokens/s each stream gets while decoding
    prompt_rate = batch * load.stream_tokens_per_s * load.prompt_tokens / load.output_tokens
    prefill_share = min(1.0, prompt_rate / (e.prefill_tokens_per_gpu_s * g))
    return ServingSize(load, gpu, replicas, g, batch, decode * (1 - prefill_share), prefill_share, e)
