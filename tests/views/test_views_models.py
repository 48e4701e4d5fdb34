"""Golden output of ``planner.views.models``: two catalog models, one dense, one MoE with MLA."""

from __future__ import annotations

from planner.views.models import render_models
from planner.workload.architectures import get_spec


def test_models_render_as_before():
    assert render_models([get_spec(name).to_dict() for name in ("qwen2.5-7b", "deepseek-v3")]) == MODELS


# What the views printed before they moved out of planner/commands/, byte for byte.
MODELS = """\
model        parameters                            layers  hidden  heads  KV heads       head dim  attention    vocab  context
-----------  ------------------------------------  ------  ------  -----  -------------  --------  ---------  -------  -------
qwen2.5-7b   7.6B                                      28    3584     28  4                   128  GQA        152,064   32,768
deepseek-v3  671.0B (37.0B active, 8/256 experts)      61    7168    128  latent 512+64       128  MLA        129,280  163,840
2 models; sources (each model's config.json) in --format json or csv. Use a name with `planner estimate --model NAME`; --params N for any other model."""
