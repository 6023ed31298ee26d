import pytest
from shop.cart import Cart
from shop.inventory import Inventory


@pytest.fixture
def cart() -> Cart:
    c = Cart()
    c.add("MUG-BLUE", 1_250, 2)
    c.add("TEE-M", 1_999)
    return c


@pytest.fixture
def inventory() -> Inventory:
    return Inventory({"MUG-BLUE": 10, "TEE-M": 3})
