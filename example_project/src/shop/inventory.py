"""Stock levels and reservations."""

from __future__ import annotations

from collections.abc import Iterator


class OutOfStock(Exception):
    """Raised when a reservation asks for more units than are available."""


class Inventory:
    """Units on hand per SKU, minus units reserved by open orders."""

    def __init__(self, stock: dict[str, int] | None = None) -> None:
        self._stock: dict[str, int] = dict(stock or {})
        self._reserved: dict[str, int] = {}

    def available(self, sku: str) -> int:
        """Units that can still be reserved."""
        return self._stock.get(sku, 0) - self._reserved.get(sku, 0)

    def reserve(self, sku: str, qty: int) -> int:
        """Reserve `qty` units of `sku`; returns how many remain available."""
        if sku not in self._stock:
            raise KeyError(sku)
        elif qty > self.available(sku):
            left = self.available(sku)
            raise OutOfStock(f"{sku}: wanted {qty}, only {left} available")
        else:
            self._reserved[sku] = self._reserved.get(sku, 0) + qty
        return self.available(sku)

    def release(self, sku: str, qty: int) -> int:
        """Give back up to `qty` reserved units; returns how many were released."""
        held = self._reserved.get(sku, 0)
        freed = min(held, qty)
        if freed:
            self._reserved[sku] = held - freed
        return freed

    def low_stock(self, threshold: int = 5) -> Iterator[str]:
        """Yield, in SKU order, each SKU with fewer than `threshold` units available."""
        for sku in sorted(self._stock):
            if self.available(sku) < threshold:
                yield sku


async def reserve_many(inventory: Inventory, wanted: dict[str, int]) -> list[str]:
    """Reserve each SKU in `wanted`; returns the SKUs that could not be reserved."""
    failed: list[str] = []
    for sku, qty in wanted.items():
        try:
            inventory.reserve(sku, qty)
        except (KeyError, OutOfStock):
            failed.append(sku)
    return failed


def restock_batches(on_hand: int, target: int, batch_size: int) -> int:
    """Number of supplier batches needed to lift `on_hand` to at least `target`."""
    if batch_size <= 0:
        raise ValueError("batch_size must be positive")
    batches = 0
    while on_hand < target:
        on_hand += batch_size
        batches += 1
    return batches
