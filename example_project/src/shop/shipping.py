"""Shipping: cost by weight band, parcel weight, carriers."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from shop.cart import CartLine


def shipping_cost(weight_grams: int, express: bool = False) -> int:
    """Shipping price in cents for a parcel, by weight band; express doubles it."""
    if weight_grams <= 0:
        raise ValueError("weight must be positive")
    if weight_grams <= 1_000:
        cost = 490
    elif weight_grams <= 5_000:
        cost = 690
    elif weight_grams <= 20_000:
        cost = 1_190
    else:
        raise ValueError(f"{weight_grams} g is too heavy for parcel post")
    return cost * 2 if express else cost


def parcel_weight(
    lines: Iterable[CartLine], unit_grams: dict[str, int], packaging_grams: int = 150
) -> int:
    """Weight in grams of the lines plus the box; KeyError for an unknown SKU."""
    total = packaging_grams
    for line in lines:
        total += unit_grams[line.sku] * line.qty
    return total


@dataclass(frozen=True)
class Carrier:
    """A parcel carrier with a weight limit and a normal delivery time."""

    name: str
    max_grams: int
    days: int

    @classmethod
    def standard(cls) -> Carrier:
        """The default carrier used at checkout."""
        return cls(name="ParcelPost", max_grams=20_000, days=3)

    @staticmethod
    def tracking_url(code: str) -> str:
        """Public tracking link for a parcel code (spaces removed, upper-cased)."""
        return "https://track.example.com/" + code.replace(" ", "").upper()

    def can_carry(self, weight_grams: int) -> bool:
        """Whether a parcel of this weight is within the carrier's limit."""
        return 0 < weight_grams <= self.max_grams

    def delivery_days(self, express: bool = False) -> int:
        """Expected days to deliver; express saves a day, but never below one."""
        if express:
            return max(1, self.days - 1)
        return self.days
