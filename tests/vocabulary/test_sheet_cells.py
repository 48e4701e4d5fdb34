"""How the CSVs people open spell a time and round money: one rule in vocab, for the report's files and
every command's --format csv."""

from __future__ import annotations

import datetime as dt

import pytest

from vocab import iso_time, sheet_number, sheet_places, sheet_time


def test_a_sheet_time_is_the_iso_moment_in_utc_without_t_or_zone():
    naive = dt.datetime(2026, 8, 6, 0, 0)  # the database's naive UTC
    assert (iso_time(naive), sheet_time(naive)) == ("2026-08-06T00:00:00Z", "2026-08-06 00:00:00")
    beijing = dt.datetime(2026, 8, 6, 8, 30, 5, 123456, tzinfo=dt.timezone(dt.timedelta(hours=8)))
    assert sheet_time(beijing) == "2026-08-06 00:30:05"  # converted to UTC; whole seconds


@pytest.mark.parametrize(
    ("column", "value", "unit", "text"),
    [
        ("cny_per_gpu_hour", 17.736986, None, "17.74"),
        ("cny_per_gpu_hour", 0.35, None, "0.3500"),  # per hour under 1 CNY: 4 places
        ("rent_cny_per_gpu_hour", 0.123456, None, "0.1235"),
        ("cheapest_spot_cny_per_gpu_hour", 1.0, None, "1.00"),
        ("price", 0.35, "hour", "0.3500"),  # a price per hour: its row's unit says so
        ("price", 0.35, "month", "0.35"),
        ("unit_price", 12948, "month", "12948.00"),
        ("total_cny", 600, None, "600.00"),
        ("purchase_price_usd", 1599, None, "1599.00"),
        ("cny_per_million_tokens_job", 0.0731, None, "0.0731"),  # per a unit of use too
        ("cny_per_million_tokens_job", 12.345, None, "12.35"),
        ("change_pct", -12.5, None, "-12.50"),
        ("change_percent", -0.001, None, "0.00"),  # no "-0.00"
    ],
)
def test_money_and_percentages_get_their_places(column, value, unit, text):
    assert sheet_number(column, value, unit) == text


@pytest.mark.parametrize(
    "column",
    ["gpus_per_instance", "memory_gb", "duration_s", "prices_stored", "tflops_per_cny_hour",
     "memory_gb_per_10k_cny", "break_even_hours", "idle_gpus"],
)  # fmt: skip
def test_other_numbers_are_not_money(column):
    assert sheet_places(column, 0.5, "hour") is None and sheet_number(column, 0.5) is None
