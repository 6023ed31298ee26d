"""A scripted agent that works example_project down to zero remaining quests.

It does what an agent following the README does, and nothing more: copy
example_project to a scratch folder, ``pytest --quest scan``, then loop
``pytest --quest next --quest-format json`` -> write a test for the quest
it names -> ``pytest --quest submit --quest-format json`` (again when it exits 75: no
verdict, the run could not complete for a reason outside it), until
``next`` says ``done``.  It follows only ``next``'s JSON (the quest id picks
a prepared test body); the order of the quests is the plugin's.

The prepared tests are honest: they check exact return values and
exceptions on both sides of every branch, so they would also survive the
mutation step of the gate.

Usage (from the repository root): python -m tests.acceptance.agent_loop [--workdir DIR] [-- PYTEST_ARGS...]
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from pytest_quest.core.environment import ENVIRONMENT_EXIT
from tests.support.paths import EXAMPLE_PROJECT
from tests.support.runner import run_pytest

# Submits of one quest whose run could not complete for a reason outside it (exit 75).
ENVIRONMENT_RETRIES = 2

CART = "src/shop/cart.py::"
INVENTORY = "src/shop/inventory.py::"
PRICING = "src/shop/pricing.py::"
SHIPPING = "src/shop/shipping.py::"
TEXT = "src/shop/text.py::"

# Quest id -> the body of a test file that covers and checks that function.
TESTS: dict[str, str] = {
    CART + "CartLine.total": """
from shop.cart import CartLine


def test_total_is_unit_price_times_quantity():
    assert CartLine("MUG", 1_250, 3).total() == 3_750
    assert CartLine("MUG", 1_250).total() == 1_250
    assert CartLine("MUG", 1_250, 0).total() == 0
""",
    CART + "Cart.__init__": """
from shop.cart import Cart


def test_new_cart_is_empty():
    cart = Cart()
    assert cart.lines == []
    assert cart.coupon is None
    assert cart.total() == 0
""",
    CART + "Cart.add": """
import pytest

from shop.cart import Cart, CartLine


def test_add_appends_a_new_line_and_returns_it():
    cart = Cart()
    line = cart.add("MUG", 1_250, 2)
    assert line == CartLine("MUG", 1_250, 2)
    assert cart.lines == [CartLine("MUG", 1_250, 2)]
    assert cart.add("TEE", 999) == CartLine("TEE", 999, 1)
    assert [line.sku for line in cart.lines] == ["MUG", "TEE"]


def test_add_merges_into_the_line_of_the_same_sku():
    cart = Cart()
    cart.add("MUG", 1_250, 2)
    cart.add("TEE", 999)
    merged = cart.add("MUG", 1_250, 3)
    assert merged is cart.lines[0]
    assert merged.qty == 5
    second = cart.add("TEE", 999, 2)
    assert second is cart.lines[1]
    assert [(line.sku, line.qty) for line in cart.lines] == [("MUG", 5), ("TEE", 3)]


@pytest.mark.parametrize("qty", [0, -1])
def test_add_rejects_a_quantity_below_one(qty):
    cart = Cart()
    with pytest.raises(ValueError, match=f"^quantity must be positive, got {qty}$"):
        cart.add("MUG", 1_250, qty)
    assert cart.lines == []


def test_add_accepts_a_quantity_of_one():
    assert Cart().add("MUG", 100, 1).qty == 1
""",
    CART + "Cart.remove": """
import pytest

from shop.cart import Cart, CartLine


def make_cart():
    cart = Cart()
    cart.add("MUG", 1_250, 2)
    cart.add("TEE", 999)
    return cart


def test_remove_a_later_line_returns_it_and_keeps_the_others():
    cart = make_cart()
    assert cart.remove("TEE") == CartLine("TEE", 999, 1)
    assert cart.lines == [CartLine("MUG", 1_250, 2)]


def test_remove_the_first_line():
    cart = make_cart()
    assert cart.remove("MUG") == CartLine("MUG", 1_250, 2)
    assert cart.lines == [CartLine("TEE", 999, 1)]


def test_remove_an_unknown_sku_raises_and_changes_nothing():
    cart = make_cart()
    with pytest.raises(KeyError) as info:
        cart.remove("NOPE")
    assert info.value.args == ("NOPE",)
    assert [line.sku for line in cart.lines] == ["MUG", "TEE"]
""",
    CART + "Cart.coupon": """
from shop.cart import Cart
from shop.pricing import Coupon


def test_coupon_getter_returns_what_was_set():
    cart = Cart()
    assert cart.coupon is None
    coupon = Coupon("SAVE10", 10)
    cart.coupon = coupon
    assert cart.coupon is coupon
""",
    CART + "Cart.coupon@2": """
import pytest

from shop.cart import Cart
from shop.pricing import Coupon


def test_setter_attaches_and_clears_a_coupon():
    cart = Cart()
    coupon = Coupon("SAVE10", 10)
    cart.coupon = coupon
    assert cart.coupon is coupon
    cart.coupon = None
    assert cart.coupon is None


def test_setter_accepts_one_percent():
    cart = Cart()
    cart.coupon = Coupon("SAVE1", 1)
    assert cart.coupon == Coupon("SAVE1", 1)


@pytest.mark.parametrize("percent", [0, -5])
def test_setter_rejects_a_coupon_without_discount(percent):
    cart = Cart()
    with pytest.raises(ValueError, match="^coupon NOPE gives no discount$"):
        cart.coupon = Coupon("NOPE", percent)
    assert cart.coupon is None
""",
    CART + "Cart.total": """
from shop.cart import Cart
from shop.pricing import Coupon


def test_total_sums_the_lines_and_applies_the_coupon():
    cart = Cart()
    assert cart.total() == 0
    cart.add("MUG", 1_250, 2)
    cart.add("TEE", 1_999)
    assert cart.total() == 4_499
    cart.coupon = Coupon("SAVE10", 10)
    assert cart.total() == 4_499 - 449
    cart.coupon = Coupon("SAVE10-MIN5000", 10, 5_000)
    assert cart.total() == 4_499


def test_total_never_goes_below_zero():
    cart = Cart()
    cart.add("MUG", 1_000)
    cart.coupon = Coupon("SAVE150", 150)
    assert cart.total() == 0
""",
    INVENTORY + "Inventory.__init__": """
from shop.inventory import Inventory


def test_new_inventory_copies_its_stock():
    stock = {"MUG": 2}
    inventory = Inventory(stock)
    stock["MUG"] = 9
    assert inventory.available("MUG") == 2
    assert Inventory().available("MUG") == 0
    assert list(Inventory().low_stock()) == []
""",
    INVENTORY + "Inventory.available": """
from shop.inventory import Inventory


def test_available_is_stock_minus_reserved():
    inventory = Inventory({"MUG": 10})
    assert inventory.available("MUG") == 10
    inventory.reserve("MUG", 4)
    assert inventory.available("MUG") == 6
    assert inventory.available("TEE") == 0
""",
    INVENTORY + "Inventory.reserve": """
import pytest

from shop.inventory import Inventory, OutOfStock


def test_reserve_returns_what_remains_available():
    inventory = Inventory({"MUG": 10})
    assert inventory.reserve("MUG", 4) == 6
    assert inventory.reserve("MUG", 6) == 0
    assert inventory.available("MUG") == 0


def test_reserve_an_unknown_sku_raises_keyerror():
    inventory = Inventory({"MUG": 1})
    with pytest.raises(KeyError) as info:
        inventory.reserve("TEE", 1)
    assert info.value.args == ("TEE",)
    assert inventory.available("MUG") == 1


def test_reserve_more_than_available_raises_and_keeps_stock():
    inventory = Inventory({"MUG": 3})
    inventory.reserve("MUG", 1)
    with pytest.raises(OutOfStock, match="^MUG: wanted 3, only 2 available$"):
        inventory.reserve("MUG", 3)
    assert inventory.available("MUG") == 2
""",
    INVENTORY + "Inventory.release": """
from shop.inventory import Inventory


def test_release_gives_back_at_most_what_is_reserved():
    inventory = Inventory({"MUG": 10})
    inventory.reserve("MUG", 4)
    assert inventory.release("MUG", 3) == 3
    assert inventory.available("MUG") == 9
    assert inventory.release("MUG", 5) == 1
    assert inventory.available("MUG") == 10


def test_release_with_nothing_reserved_releases_nothing_and_records_nothing():
    inventory = Inventory({"MUG": 10})
    assert inventory.release("MUG", 2) == 0
    assert inventory.available("MUG") == 10
    assert inventory.release("TEE", 1) == 0
    assert inventory.available("TEE") == 0
    # Nothing freed: no reservation entry is created or touched.
    assert inventory._reserved == {}
    inventory.reserve("MUG", 3)
    assert inventory.release("MUG", 0) == 0
    assert inventory._reserved == {"MUG": 3}
""",
    INVENTORY + "Inventory.low_stock": """
from shop.inventory import Inventory


def test_low_stock_yields_low_skus_in_order_and_skips_the_others():
    inventory = Inventory({"TEE": 2, "MUG": 10, "CAP": 4, "BAG": 5})
    assert list(inventory.low_stock()) == ["CAP", "TEE"]
    assert list(inventory.low_stock(threshold=11)) == ["BAG", "CAP", "MUG", "TEE"]
    assert list(inventory.low_stock(threshold=0)) == []
    inventory.reserve("MUG", 7)
    assert list(inventory.low_stock()) == ["CAP", "MUG", "TEE"]
""",
    INVENTORY + "reserve_many": """
import asyncio

from shop.inventory import Inventory, reserve_many


def test_reserve_many_returns_the_skus_it_could_not_reserve():
    inventory = Inventory({"MUG": 10, "TEE": 3})
    failed = asyncio.run(reserve_many(inventory, {"MUG": 4, "TEE": 5, "CAP": 1}))
    assert failed == ["TEE", "CAP"]
    assert inventory.available("MUG") == 6
    assert inventory.available("TEE") == 3
    assert asyncio.run(reserve_many(inventory, {})) == []
""",
    INVENTORY + "restock_batches": """
import pytest

from shop.inventory import restock_batches


def test_restock_batches_counts_whole_batches_up_to_the_target():
    assert restock_batches(on_hand=3, target=20, batch_size=6) == 3
    assert restock_batches(on_hand=0, target=12, batch_size=6) == 2
    assert restock_batches(on_hand=19, target=20, batch_size=1) == 1
    assert restock_batches(on_hand=20, target=20, batch_size=6) == 0
    assert restock_batches(on_hand=25, target=20, batch_size=6) == 0


@pytest.mark.parametrize("batch_size", [0, -3])
def test_restock_batches_rejects_a_batch_size_below_one(batch_size):
    with pytest.raises(ValueError, match="^batch_size must be positive$"):
        restock_batches(on_hand=1, target=5, batch_size=batch_size)
""",
    PRICING + "apply_percent": """
import pytest

from shop.pricing import apply_percent


def test_apply_percent_rounds_down_to_whole_cents():
    assert apply_percent(999, 25) == 749
    assert apply_percent(1_999, 10) == 1_799
    assert apply_percent(1_000, 0) == 1_000
    assert apply_percent(1_000, 100) == 0


@pytest.mark.parametrize("percent", [-1, 101])
def test_apply_percent_rejects_out_of_range(percent):
    with pytest.raises(ValueError, match=f"^percent out of range: {percent}$"):
        apply_percent(1_000, percent)
""",
    PRICING + "bulk_unit_price": """
from shop.pricing import bulk_unit_price


def test_bulk_unit_price_by_quantity_band():
    assert bulk_unit_price(1_000, 1) == 1_000
    assert bulk_unit_price(1_000, 9) == 1_000
    assert bulk_unit_price(1_000, 10) == 950
    assert bulk_unit_price(1_000, 49) == 950
    assert bulk_unit_price(1_000, 50) == 900
    assert bulk_unit_price(1_000, 500) == 900
    assert bulk_unit_price(999, 10) == 949
""",
    PRICING + "tiered_discount": """
from shop.pricing import tiered_discount


def test_tiered_discount_builds_a_lookup():
    percent_for = tiered_discount({0: 0, 10_000: 5, 20_000: 10})
    assert percent_for(25_000) == 10
    assert percent_for(15_000) == 5
    assert percent_for(500) == 0
""",
    PRICING + "tiered_discount.percent_for": """
from shop.pricing import tiered_discount


def test_percent_for_picks_the_highest_tier_reached():
    percent_for = tiered_discount({10_000: 5, 20_000: 10})
    assert percent_for(25_000) == 10
    assert percent_for(20_000) == 10
    assert percent_for(19_999) == 5
    assert percent_for(10_000) == 5


def test_percent_for_below_every_tier_is_zero():
    percent_for = tiered_discount({10_000: 5, 20_000: 10})
    assert percent_for(9_999) == 0
    assert percent_for(0) == 0
    assert tiered_discount({})(5_000) == 0
""",
    PRICING + "Coupon.discount_for": """
from shop.pricing import Coupon


def test_discount_for_respects_the_minimum_spend():
    coupon = Coupon("SAVE10", 10, min_subtotal=5_000)
    assert coupon.discount_for(4_999) == 0
    assert coupon.discount_for(5_000) == 500
    assert coupon.discount_for(6_099) == 609
    assert Coupon("SAVE15", 15).discount_for(1_000) == 150
    assert Coupon("SAVE15", 15).discount_for(0) == 0
""",
    PRICING + "Coupon.from_code": """
import re

import pytest

from shop.pricing import Coupon


def test_from_code_parses_percent_and_minimum():
    assert Coupon.from_code("save15") == Coupon("SAVE15", 15, 0)
    assert Coupon.from_code("SAVE10-MIN5000") == Coupon("SAVE10-MIN5000", 10, 5_000)
    assert Coupon.from_code("save5-min20") == Coupon("SAVE5-MIN20", 5, 20)


@pytest.mark.parametrize("code", ["SAVEX", "SAVE10-MINabc", "FREE"])
def test_from_code_rejects_malformed_codes(code):
    with pytest.raises(ValueError, match="^" + re.escape(f"malformed coupon code: {code!r}") + "$"):
        Coupon.from_code(code)
""",
    SHIPPING + "shipping_cost": """
import pytest

from shop.shipping import shipping_cost


def test_shipping_cost_by_weight_band():
    assert shipping_cost(1) == 490
    assert shipping_cost(1_000) == 490
    assert shipping_cost(1_001) == 690
    assert shipping_cost(5_000) == 690
    assert shipping_cost(5_001) == 1_190
    assert shipping_cost(20_000) == 1_190


def test_express_doubles_the_cost():
    assert shipping_cost(800, express=True) == 980
    assert shipping_cost(3_000, express=True) == 1_380
    assert shipping_cost(20_000, express=True) == 2_380
    assert shipping_cost(800, express=False) == 490


@pytest.mark.parametrize("weight", [0, -5])
def test_shipping_cost_rejects_a_weight_below_one_gram(weight):
    with pytest.raises(ValueError, match="^weight must be positive$"):
        shipping_cost(weight)


def test_shipping_cost_rejects_a_parcel_too_heavy():
    with pytest.raises(ValueError, match="^20001 g is too heavy for parcel post$"):
        shipping_cost(20_001)
""",
    SHIPPING + "parcel_weight": """
import pytest

from shop.cart import CartLine
from shop.shipping import parcel_weight

GRAMS = {"MUG": 350, "TEE": 200}


def test_parcel_weight_adds_lines_and_packaging():
    lines = [CartLine("MUG", 1_250, 2), CartLine("TEE", 999, 3)]
    assert parcel_weight(lines, GRAMS) == 150 + 700 + 600
    assert parcel_weight(lines, GRAMS, packaging_grams=0) == 1_300
    assert parcel_weight([], GRAMS) == 150
    assert parcel_weight([], GRAMS, packaging_grams=40) == 40


def test_parcel_weight_of_an_unknown_sku_raises_keyerror():
    with pytest.raises(KeyError) as info:
        parcel_weight([CartLine("CAP", 500)], GRAMS)
    assert info.value.args == ("CAP",)
""",
    SHIPPING + "Carrier.standard": """
from shop.shipping import Carrier


def test_standard_carrier():
    assert Carrier.standard() == Carrier(name="ParcelPost", max_grams=20_000, days=3)
""",
    SHIPPING + "Carrier.tracking_url": """
from shop.shipping import Carrier


def test_tracking_url_strips_spaces_and_upper_cases():
    assert Carrier.tracking_url("ab 12 cd") == "https://track.example.com/AB12CD"
    assert Carrier.tracking_url("XY9") == "https://track.example.com/XY9"
    assert Carrier.standard().tracking_url("z 1") == "https://track.example.com/Z1"
""",
    SHIPPING + "Carrier.can_carry": """
from shop.shipping import Carrier


def test_can_carry_within_the_limit_only():
    carrier = Carrier("Tiny", max_grams=1_000, days=2)
    assert carrier.can_carry(1) is True
    assert carrier.can_carry(1_000) is True
    assert carrier.can_carry(1_001) is False
    assert carrier.can_carry(0) is False
    assert carrier.can_carry(-1) is False
""",
    SHIPPING + "Carrier.delivery_days": """
from shop.shipping import Carrier


def test_delivery_days_normal_and_express():
    assert Carrier("A", 1_000, 3).delivery_days() == 3
    assert Carrier("A", 1_000, 3).delivery_days(express=False) == 3
    assert Carrier("A", 1_000, 3).delivery_days(express=True) == 2
    assert Carrier("B", 1_000, 2).delivery_days(express=True) == 1


def test_express_never_goes_below_one_day():
    assert Carrier("C", 1_000, 1).delivery_days(express=True) == 1
    assert Carrier("C", 1_000, 1).delivery_days() == 1
""",
    TEXT + "slugify": """
from shop.text import slugify


def test_slugify():
    assert slugify("Blue Mug (Large)") == "blue-mug-large"
    assert slugify("Crème Brûlée Set") == "creme-brulee-set"
    assert slugify("  --  ") == ""
""",
    TEXT + "to_cents": """
from shop.text import to_cents


def test_to_cents():
    assert to_cents(12) == 1_200
    assert to_cents(0) == 0
    assert to_cents(-3) == -300
""",
    TEXT + "format_price": """
from shop.text import format_price


def test_format_price_in_euro():
    assert format_price(1_999) == "19,99 €"
    assert format_price(5) == "0,05 €"
    assert format_price(-250) == "-2,50 €"
    assert format_price(1_999, "EUR") == "19,99 €"


def test_format_price_in_dollar():
    assert format_price(1_999, "USD") == "$19.99"
    assert format_price(-250, "USD") == "-$2.50"


def test_format_price_in_other_currencies():
    assert format_price(1_999, "GBP") == "19.99 GBP"
    assert format_price(-1, "CHF") == "-0.01 CHF"
    assert format_price(0, "CHF") == "0.00 CHF"
""",
    TEXT + "truncate": """
import pytest

from shop.text import truncate


def test_truncate_keeps_text_that_fits():
    assert truncate("mug", 5) == "mug"
    assert truncate("mugs!", 5) == "mugs!"
    assert truncate("", 0, ellipsis="") == ""


def test_truncate_cuts_and_ends_with_the_ellipsis():
    assert truncate("Blue Mug Large", 9) == "Blue Mug…"
    assert truncate("Blue Mug Large", 6) == "Blue…"
    assert truncate("abcdef", 4, ellipsis="...") == "a..."
    assert truncate("abc", 1) == "…"


def test_truncate_rejects_a_width_below_the_ellipsis():
    with pytest.raises(ValueError, match="^width 0 is too small for the ellipsis$"):
        truncate("abc", 0)
    with pytest.raises(ValueError, match="^width 2 is too small for the ellipsis$"):
        truncate("abcdef", 2, ellipsis="...")
""",
}


class AgentLoopError(AssertionError):
    """The loop could not bring the project to zero remaining quests."""


def pytest_json(workdir: Path, pytest_args: list[str], *args: str) -> tuple[int, dict[str, Any]]:
    """Run one quest command in `workdir`; return its exit status and its JSON object."""
    result = run_pytest(workdir, *pytest_args, *args, "--quest-format", "json", timeout=600)
    try:
        data = json.loads(result.stdout.str())
    except ValueError:
        raise AgentLoopError(
            f"`pytest {' '.join(args)}` printed no JSON object (exit {result.ret}):\n"
            f"{result.stdout.str()}\n{result.stderr.str()}"
        ) from None
    return int(result.ret), data


def file_for_quest(quest_id: str) -> str:
    slug = re.sub(r"\W+", "_", quest_id.split("::", 1)[1]).strip("_").lower()
    module = Path(quest_id.split("::", 1)[0]).stem
    return f"test_quest_{module}_{slug}.py"


def run_loop(workdir: Path, pytest_args: list[str] | None = None) -> dict[str, Any]:
    """Copy example_project into `workdir` and work it down; return what happened."""
    args = list(pytest_args or [])
    if workdir.exists():
        shutil.rmtree(workdir)
    shutil.copytree(
        EXAMPLE_PROJECT, workdir, ignore=shutil.ignore_patterns("__pycache__", ".pytest_cache")
    )
    (workdir / "quest.json").unlink(missing_ok=True)
    shutil.rmtree(workdir / ".quest", ignore_errors=True)
    started = time.monotonic()
    code, scan = pytest_json(workdir, args, "--quest", "scan")
    if code != 0:
        raise AgentLoopError(f"scan failed with exit {code}: {scan}")
    steps: list[dict[str, Any]] = []
    limit = 2 * len(scan["counts"]) + 3 * sum(scan["counts"].values())
    while True:
        if len(steps) > limit:
            raise AgentLoopError(f"no end after {len(steps)} submissions: {steps}")
        code, shown = pytest_json(workdir, args, "--quest", "next")
        if code != 0:
            raise AgentLoopError(f"next failed with exit {code}: {shown}")
        if shown["done"]:
            break
        quest = shown["quest"]
        if quest is None:
            raise AgentLoopError(f"next named no quest and is not done: {shown}")
        quest_id = quest["id"]
        body = TESTS.get(quest_id)
        if body is None:
            raise AgentLoopError(f"no prepared test for quest {quest_id}")
        (workdir / "tests" / file_for_quest(quest_id)).write_text(body.lstrip(), encoding="utf-8")
        for _attempt in range(ENVIRONMENT_RETRIES):
            code, judged = pytest_json(workdir, args, "--quest", "submit")
            if code != ENVIRONMENT_EXIT:
                break  # 75: the run could not complete for a reason outside it, no verdict
        steps.append(
            {
                "quest": quest_id,
                "remaining_before": shown["remaining"],
                "verdict": judged.get("verdict"),
                "remaining_after": judged.get("remaining"),
                "exit": code,
            }
        )
        if judged.get("verdict") != "PASS" or code != 0:
            raise AgentLoopError(f"submit of {quest_id} was not PASS (exit {code}): {judged}")
    code, status = pytest_json(workdir, args, "--quest-status")
    if code != 0:
        raise AgentLoopError(f"status failed with exit {code}: {status}")
    return {
        "scan": {"counts": scan["counts"], "remaining": scan["remaining"]},
        "steps": steps,
        "remaining": status["remaining"],
        "counts": status["counts"],
        "states": {quest["id"]: quest["state"] for quest in status["quests"]},
        "seconds": round(time.monotonic() - started, 1),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workdir", type=Path, help="scratch folder (default: a new temp folder)")
    parser.add_argument("pytest_args", nargs="*", help="extra pytest arguments, after --")
    options = parser.parse_args(argv)
    workdir = options.workdir or Path(tempfile.mkdtemp(prefix="quest-agent-")) / "example_project"
    try:
        summary = run_loop(workdir, options.pytest_args)
    except AgentLoopError as exc:
        print(f"agent loop failed: {exc}", file=sys.stderr)
        return 1
    print(json.dumps(summary, indent=2))
    not_pass = sorted(qid for qid, state in summary["states"].items() if state != "PASS")
    if summary["remaining"] != 0 or not_pass:
        print(
            f"agent loop ended with {summary['remaining']} remaining: {not_pass}", file=sys.stderr
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
