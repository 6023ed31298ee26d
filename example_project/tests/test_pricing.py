from shop.pricing import Coupon, apply_percent, tiered_discount


def test_apply_percent_rounds_down():
    assert apply_percent(999, 25) == 749


def test_tiered_discount_picks_highest_reached_tier():
    percent_for = tiered_discount({0: 0, 10_000: 5, 20_000: 10})
    assert percent_for(25_000) == 10
    assert percent_for(15_000) == 5
    assert percent_for(500) == 0


def test_coupon_discount_respects_minimum():
    coupon = Coupon("SAVE10", 10, min_subtotal=5_000)
    assert coupon.discount_for(4_999) == 0
    assert coupon.discount_for(6_000) == 600


def test_coupon_from_code():
    coupon = Coupon.from_code("save15-min2000")
    assert coupon == Coupon("SAVE15-MIN2000", 15, 2_000)
