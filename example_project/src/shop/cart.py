"""The shopping cart: lines of SKU x quantity, plus an optional coupon."""

from __future__ import annotations

from dataclasses import dataclass

from shop.pricing import Coupon


@dataclass
class CartLine:
    """One SKU in the cart with its unit price (cents) and quantity."""

    sku: str
    unit_cents: int
    qty: int = 1

    def total(self) -> int:
        """Line total in cents."""
        return self.unit_cents * self.qty


class Cart:
    """An ordered collection of cart lines; at most one line per SKU."""

    def __init__(self) -> None:
        self.lines: list[CartLine] = []
        self._coupon: Coupon | None = None

    def add(self, sku: str, unit_cents: int, qty: int = 1) -> CartLine:
        """Add `qty` of `sku`, merging into an existing line for the same SKU."""
        if qty <= 0:
            raise ValueError(f"quantity must be positive, got {qty}")
        for line in self.lines:
            if line.sku == sku:
                line.qty += qty
                return line
        line = CartLine(sku, unit_cents, qty)
        self.lines.append(line)
        return line

    def remove(self, sku: str) -> CartLine:
        """Remove and return the line for `sku`; KeyError if it is not in the cart."""
        for line in self.lines:
            if line.sku == sku:
                break
        else:
            raise KeyError(sku)
        self.lines.remove(line)
        return line

    @property
    def coupon(self) -> Coupon | None:
        """The coupon currently attached, if any."""
        return self._coupon

    @coupon.setter
    def coupon(self, value: Coupon | None) -> None:
        """Attach a coupon (None clears it); a coupon worth 0% is rejected."""
        if value is not None and value.percent <= 0:
            raise ValueError(f"coupon {value.code} gives no discount")
        self._coupon = value

    def total(self) -> int:
        """Sum of all lines minus the coupon discount, in cents."""
        subtotal = sum(line.total() for line in self.lines)
        if self._coupon is None:
            return subtotal
        return max(0, subtotal - self._coupon.discount_for(subtotal))
