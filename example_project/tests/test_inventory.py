import asyncio

import pytest
from shop.inventory import OutOfStock, reserve_many, restock_batches


def test_reserve_reduces_availability(inventory):
    assert inventory.reserve("TEE-M", 2) == 1
    assert inventory.available("TEE-M") == 1


def test_reserve_more_than_available(inventory):
    with pytest.raises(OutOfStock):
        inventory.reserve("TEE-M", 4)


def test_low_stock(inventory):
    assert list(inventory.low_stock(threshold=20)) == ["MUG-BLUE", "TEE-M"]


def test_reserve_many_reports_failures(inventory):
    failed = asyncio.run(reserve_many(inventory, {"MUG-BLUE": 4, "TEE-M": 5}))
    assert failed == ["TEE-M"]
    assert inventory.available("MUG-BLUE") == 6


@pytest.mark.skip(reason="supplier batch sizes are being renegotiated")
def test_restock_batches():
    assert restock_batches(on_hand=3, target=20, batch_size=6) == 3
