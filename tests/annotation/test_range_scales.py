"""Integer-range scales (0-10, 0-21 and any a-b): their values, and their maps onto 0-7 and
0 / 0.5 / 1, stated in words."""

from decimal import Decimal

import pytest

from annotation.scales import (
    Scale,
    ScaleError,
    check_label,
    check_value,
    comparison_scale,
    conversions,
    is_scale,
    native_cuts,
    on_scale,
    scale_spec,
    ternary_of,
    to_0_7,
)


def test_named_and_unnamed_ranges_are_scales_and_others_are_not():
    assert Scale.ZERO_TO_TEN == "0-10" and Scale.ZERO_TO_TWENTY_ONE == "0-21"
    for key in ("0-10", "0-21", "0-20", "2-12", "0-50"):
        assert is_scale(key), key
    for key in ("0-51", "5-5", "7-3", "0-7.5", "a-b", "", "0-"):
        assert not is_scale(key), key
    with pytest.raises(ScaleError, match="integer range"):
        scale_spec("0-51")
    spec = scale_spec("0-21")
    assert spec.values == tuple(Decimal(v) for v in range(22))
    assert spec.labels[Decimal(21)] == "Complete and correct proof (7 on 0-7)."
    assert spec.labels[Decimal(1)] == "0.33 on 0-7."


def test_values_and_labels_on_a_range():
    assert check_value(8, "0-10") == Decimal(8)
    with pytest.raises(ScaleError, match="allowed values are 0, 1, 2"):
        check_value("8.5", "0-10")
    assert check_label("8.5", "0-10") == Decimal("8.5")
    with pytest.raises(ScaleError, match="0 to 21"):
        check_label(22, "0-21")


@pytest.mark.parametrize(
    ("value", "scale", "on_7"),
    [
        (10, "0-10", 7),
        (8, "0-10", Decimal("5.6")),
        (0, "0-10", 0),
        (9, "0-21", 3),
        (7, "2-12", Decimal("3.5")),
    ],
)
def test_a_range_goes_onto_0_7_linearly(value, scale, on_7):
    assert to_0_7(value, scale) == on_7


@pytest.mark.parametrize(
    ("scale", "table"),
    [
        ("0-10", {1: [10], Decimal("0.5"): [8, 9], 0: list(range(8))}),
        ("0-21", {1: [21], Decimal("0.5"): list(range(15, 21)), 0: list(range(15))}),
    ],
)
def test_a_range_goes_onto_0_half_1_by_the_cut_points_scaled_to_it(scale, table):
    for score, values in table.items():
        for value in values:
            assert ternary_of(value, scale) == Decimal(score), (scale, value)
    # a label between two values: the nearest, halfway the lower
    assert ternary_of("20.5", "0-21") == Decimal("0.5")
    assert ternary_of("9.6", "0-10") == 1
    assert native_cuts("0-10", (4, 6)) == (Decimal(6), Decimal(9))
    assert ternary_of(9, "0-10", (4, 6)) == 1


def test_every_scale_states_both_maps():
    assert conversions("0-10") == {
        "to_0_7": "x -> 7x / 10, linear, the number kept (10 -> 7, 0 -> 0)",
        "to_ternary": "cut points 5 and 7 of 0-7 on 0-10 (8 and 10): 10 -> 1, 8-9 -> 0.5, "
        "0-7 -> 0 (a label between two values counts as the nearest, halfway as the lower of "
        "0-10)",
    }
    assert "15-20 -> 0.5" in conversions("0-21")["to_ternary"]
    assert conversions("2-12")["to_0_7"].startswith("x -> 7 (x - 2) / 10")
    assert conversions("0-7")["to_ternary"].startswith("by cut points 5 and 7: 7 -> 1, 5-6")
    assert conversions("1-4")["to_0_7"].startswith("x -> 2x - 1")
    assert conversions("0-0.5-1")["to_0_7"].startswith("none")


def test_comparisons_with_other_scales_go_through_0_7_or_0_half_1():
    assert comparison_scale("0-10", "0-7") == "0-7"
    assert comparison_scale("0-21", "0-0.5-1") == "0-0.5-1"
    assert comparison_scale("0-10", "0-10") == "0-10"
    assert on_scale(Decimal(8), "0-10", "0-7") == Decimal("5.6")
    assert on_scale(Decimal(15), "0-21", "0-0.5-1") == Decimal("0.5")
