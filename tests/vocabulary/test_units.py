import pytest

from planner.errors import UsageError
from planner.units import format_count, format_flops, parse_count, parse_positive_int


@pytest.mark.parametrize(
    "text, expected",
    [
        ("7B", 7_000_000_000),
        ("70b", 70_000_000_000),
        ("6.7e9", 6_700_000_000),
        ("65.2B", 65_200_000_000),
        ("500M", 500_000_000),
        ("1.4T", 1_400_000_000_000),
        ("2e12", 2_000_000_000_000),
        ("1,000", 1000),
        ("1,000,000", 1_000_000),
        ("4K", 4000),
        (" 13 B ", 13_000_000_000),
        ("1_000", 1000),
        ("2E+3", 2000),
        (7, 7),
        (6.7e9, 6_700_000_000),
        ("0.5", 0.5),
    ],
)
def test_parse_count(text, expected):
    value = parse_count(text)
    assert value == expected
    assert type(value) is type(expected)


@pytest.mark.parametrize(
    "text",
    ["-7B", "0", "0B", "nan", "inf", "-inf", "", "abc", "7BB", "B", "1e", "1,00", "1,0000", "7 X", "--7"],
)
def test_parse_count_rejects(text):
    with pytest.raises(UsageError) as err:
        parse_count(text, "--params")
    assert "--params" in err.value.message
    assert repr(text) in err.value.message or text.strip() in err.value.message
    assert "7B" in err.value.hint


def test_parse_positive_int():
    assert parse_positive_int("4096", "--seq-len") == 4096
    assert parse_positive_int("4K") == 4000
    with pytest.raises(UsageError, match="whole number"):
        parse_positive_int("2.5", "--batch")


@pytest.mark.parametrize(
    "value, text",
    [(7e9, "7.0B"), (2e12, "2.0T"), (65.2e9, "65.2B"), (500e6, "500.0M"), (4096, "4.1K"), (512, "512")],
)
def test_format_count(value, text):
    assert format_count(value) == text


@pytest.mark.parametrize("value, text", [(8.4e22, "8.4e22"), (3.14e23, "3.1e23"), (1.5e9, "1.5e9")])
def test_format_flops(value, text):
    assert format_flops(value) == text


def test_round_trip():
    for text in ("7.0B", "2.0T", "65.2B"):
        assert format_count(parse_count(text)) == text
