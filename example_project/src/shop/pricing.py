"""Prices, percentage discounts and coupons. All amounts are integer cents."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


def apply_percent(price_cents: int, percent: int) -> int:
    """Price after a percentage discount, rounded down to whole cents."""
    if not 0 <= percent <= 100:
        raise ValueError(f"percent out of range: {percent}")
    return price_cents * (100 - percent) // 100


def bulk_unit_price(unit_cents: int, qty: int) -> int:
    """Unit price when buying `qty` pieces: 5% off from 10 pieces, 10% off from 50."""
    if qty >= 50:
        return apply_percent(unit_cents, 10)
    if qty >= 10:
        return apply_percent(unit_cents, 5)
    return unit_cents


def tiered_discount(tiers: dict[int, int]) -> Callable[[int], int]:
    """Build a subtotal -> discount-percent lookup from {minimum subtotal: percent}."""
    thresholds = sorted(tiers.items(), reverse=True)

    def percent_for(subtotal: int) -> int:
        """Percent granted by the highest tier whose minimum the subtotal reaches."""
        for minimum, percent in thresholds:
            if subtotal >= minimum:
                return percent
        return 0

    return percent_for


@dataclass(frozen=True)
class Coupon:
    """A percentage coupon, optionally only valid above a minimum subtotal."""

    code: str
    percent: int
    min_subtotal: int = 0

    def discount_for(self, subtotal: int) -> int:
        """Cents taken off `subtotal`; zero when below the minimum spend."""
        if subtotal < self.min_subtotal:
            return 0
        return subtotal * self.percent // 100

    @classmethod
    def from_code(cls, code: str) -> Coupon:
        """Parse codes such as 'SAVE15' or 'SAVE10-MIN5000' (minimum in cents)."""
        head, _, minimum = code.upper().partition("-MIN")
        try:
            percent = int(head.removeprefix("SAVE"))
            min_subtotal = int(minimum) if minimum else 0
        except ValueError:
            raise ValueError(f"malformed coupon code: {code!r}") from None
        return cls(code=code.upper(), percent=percent, min_subtotal=min_subtotal)
