"""shop: a tiny web-shop core. All amounts are integer cents, all weights grams."""

from shop.cart import Cart, CartLine
from shop.inventory import Inventory, OutOfStock
from shop.pricing import Coupon
from shop.shipping import Carrier

__all__ = ["Carrier", "Cart", "CartLine", "Coupon", "Inventory", "OutOfStock"]
__version__ = "0.1.0"
