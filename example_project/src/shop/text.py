"""Text helpers: URL slugs, price formatting, truncation."""

from __future__ import annotations

import re
import unicodedata


def slugify(title: str) -> str:
    """URL slug for a product title: 'Blue Mug (Large)' -> 'blue-mug-large'."""
    ascii_title = unicodedata.normalize("NFKD", title).encode("ascii", "ignore").decode()
    words = re.findall(r"[a-z0-9]+", ascii_title.lower())
    return "-".join(words)


def to_cents(units: int) -> int:
    return units * 100


def format_price(cents: int, currency: str = "EUR") -> str:
    """Render an amount of cents for display, e.g. 1999 -> '19,99 €'."""
    sign = "-" if cents < 0 else ""
    whole, frac = divmod(abs(cents), 100)
    if currency == "EUR":
        return f"{sign}{whole},{frac:02d} €"
    elif currency == "USD":
        return f"{sign}${whole}.{frac:02d}"
    else:
        return f"{sign}{whole}.{frac:02d} {currency}"


def truncate(text: str, width: int, ellipsis: str = "…") -> str:
    """Shorten text to at most `width` characters, ending in `ellipsis` if cut."""
    if width < len(ellipsis):
        raise ValueError(f"width {width} is too small for the ellipsis")
    if len(text) <= width:
        return text
    return text[: width - len(ellipsis)].rstrip() + ellipsis


def debug_label(sku: str, qty: int) -> str:  # pragma: no cover
    """Developer-only label for log lines; deliberately excluded from coverage."""
    return f"<{sku} x{qty}>"
