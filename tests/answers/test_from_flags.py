"""``from_flags`` on the request records: what a command typed, merged with the config's defaults, and
checked before any database work (quote, plan, tco); and tco's one library call choosing its path."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest

from planner.answers.plan import PlanRequest
from planner.answers.quote import QuoteRequest
from planner.answers.tco import TcoRequest, rent_or_buy
from planner.config import Config, load_config
from planner.errors import PlannerError, QuantityError


def _config(tmp_path: Path, text: str = "") -> Config:
    path = tmp_path / "settings.toml"
    path.write_text(text, encoding="utf-8")
    return load_config(path, env={}, cwd=tmp_path)


def test_a_quote_takes_what_was_not_typed_from_the_config(tmp_path):
    config = _config(tmp_path, '[quote]\ntop = 3\nscope = "all"\nprice_basis = "median"\nhistory_days = 14\n')
    request = QuoteRequest.from_flags({"gpu": "A100", "hours": 100, "top": None, "scope": None}, config)
    assert (request.top, request.scope, request.price_basis, request.history_days) == (3, "all", "median", 14)
    assert (request.gpus, request.days, request.providers) == (1, None, ())
    typed = {"gpu": "A100", "hours": 100, "gpus": 8, "top": 5, "scope": "MAINLAND", "price_basis": "min"}
    request = QuoteRequest.from_flags(typed, config)
    assert (request.gpus, request.top, request.scope, request.price_basis) == (8, 5, "mainland", "min")


def test_a_quote_refuses_a_bad_setting_or_flag_before_the_database(tmp_path):
    with pytest.raises(PlannerError, match=r"\[quote\] price_basis"):
        QuoteRequest.from_flags(
            {"gpu": "A100", "hours": 1}, _config(tmp_path, '[quote]\nprice_basis = "mean"\n')
        )
    with pytest.raises(QuantityError, match="top"):
        QuoteRequest.from_flags({"gpu": "A100", "hours": 1, "top": 0}, _config(tmp_path))


def test_a_plan_request_is_its_workload_its_limits_and_its_offers(tmp_path):
    config = _config(tmp_path, '[quote]\nscope = "all"\nhistory_days = 7\n')
    given = {"model": "qwen2.5-7b", "params": None, "task": "lora", "tokens": 1_000_000_000,
             "gpus": ("A100",), "providers": ("aliyun",), "budget": 50_000, "deadline_hours": 72}  # fmt: skip
    request = PlanRequest.from_flags(given, config)
    assert (request.workload.model, request.workload.task, request.workload.tokens) == (
        "qwen2.5-7b",
        "lora",
        1e9,
    )
    assert (request.query.scope, request.query.providers, request.history_days) == ("all", ("aliyun",), 7)
    assert set(request.query.gpu_models) >= {"A100-40GB", "A100-80GB"}
    assert (request.budget_cny, request.deadline_hours, request.gpus_max) == (50_000, 72.0, None)
    with pytest.raises(QuantityError, match="gpus_max|gpus max"):
        PlanRequest.from_flags(given | {"gpus_max": 0}, config)


def test_tco_cites_a_typed_term_by_its_flag_and_a_changed_setting_by_the_config(tmp_path):
    config = _config(tmp_path, "[tco]\nelectricity_cny_per_kwh = 0.8\n")
    request = TcoRequest.from_flags({"gpu": "RTX4090", "hours": 3000, "pue": Decimal("1.3")}, config)
    assert request.buy["pue"] == Decimal("1.3") and request.origins["pue"] == "--pue"
    assert request.origins["electricity_cny_per_kwh"] == "config.toml [tco] electricity_cny_per_kwh"
    assert (request.basis, request.query.scope, request.rent_price) == ("median", "mainland", None)


def test_tco_on_a_given_rental_price_never_opens_the_database(tmp_path):
    def no_database():  # noqa: ANN202
        raise AssertionError("the database was opened")

    given = {"gpu": "RTX4090", "hours": 3000, "rent_price": Decimal("1.9")}
    request = TcoRequest.from_flags(given, _config(tmp_path))
    answer = rent_or_buy(request, {}, no_database)
    assert answer.rental is None and answer.outside is None
    assert answer.result.rent_cny_per_gpu_hour == Decimal("1.9")
    assert answer.to_dict()["rental"] is None and answer.to_dict()["scope"] == "mainland"


def test_a_value_request_takes_its_scope_from_the_config_and_refuses_a_bad_sort(tmp_path):
    from planner.answers.value import ValueRequest
    from planner.errors import UnknownNameError

    config = _config(tmp_path, '[quote]\nscope = "all"\n')
    request = ValueRequest.from_flags({"gpu": "A100", "sort": None, "buy": True}, config)
    assert request.offers.scope == "all" and request.sort == "tflops" and request.buy
    assert {m.name for m in request.models} == {"A100-40GB", "A100-80GB"}
    assert {m.name for m in request.left_out} >= {"A800-80GB"}  # China variants only when asked
    asked = ValueRequest.from_flags({"gpu": "A100", "include_variants": True, "scope": "mainland"}, config)
    assert "A800-80GB" in {m.name for m in asked.models} and asked.left_out == ()
    assert asked.offers.scope == "mainland"
    with pytest.raises(UnknownNameError):
        ValueRequest.from_flags({"sort": "speed"}, config)
