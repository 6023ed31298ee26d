import pytest
from shop.cart import CartLine
from shop.pricing import Coupon


def test_line_total():
    assert CartLine("MUG-BLUE", 1_250, 3).total() == 3_750


def test_cart_keeps_lines_in_order(cart):
    assert [line.sku for line in cart.lines] == ["MUG-BLUE", "TEE-M"]
    assert cart.coupon is None


def test_total_without_coupon(cart):
    assert cart.total() == 2 * 1_250 + 1_999


def test_total_with_coupon(cart):
    cart.coupon = Coupon("SAVE10", 10)
    assert cart.coupon.code == "SAVE10"
    assert cart.total() == 4_499 - 449


@pytest.mark.xfail(
    raises=KeyError,
    strict=True,
    reason="removing an unknown SKU raises; a tolerant remove() is planned",
)
def test_remove_unknown_sku_is_a_no_op(cart):
    assert cart.remove("NOT-THERE") is None
