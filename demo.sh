#!/usr/bin/env bash
# The pytest-quest demo, on a copy of example_project/: one command sets up and runs it.
#
#   bash demo.sh
#
# It makes a virtualenv (.venv, reused if present), installs pytest-quest from this
# checkout, copies example_project to a temporary folder (the checkout stays clean),
# and runs the agent loop once: scan, next, write a test for the quest, submit, status.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
python=${PYTHON:-python3}
venv=${QUEST_VENV:-$here/.venv}

if [ ! -x "$venv/bin/python" ]; then
    "$python" -m venv "$venv"
fi
"$venv/bin/python" -m pip install -q --disable-pip-version-check -e "$here[test]"

work=$(mktemp -d "${TMPDIR:-/tmp}/pytest-quest-demo.XXXXXX")
cp -r "$here/example_project" "$work/"
cd "$work/example_project"
export PATH="$venv/bin:$PATH"

step() { printf '\n\033[1m$ %s\033[0m\n' "$*"; "$@"; }

step pytest --quest scan -q
step pytest --quest next

# What an agent does next: write a test that checks the quest's function.
quest=$(pytest --quest next --quest-format json 2>/dev/null |
        python -c 'import json, sys; print(json.load(sys.stdin)["quest"]["id"])')
echo
echo "# the active quest is $quest; writing tests/test_cart_add.py for it"
cat > tests/test_cart_add.py <<'PY'
import pytest

from shop.cart import Cart


@pytest.mark.parametrize("qty", [0, -1])
def test_add_rejects_a_quantity_below_one(qty):
    with pytest.raises(ValueError, match="quantity must be positive"):
        Cart().add("MUG", 900, qty)


def test_add_merges_a_second_add_of_the_same_sku():
    cart = Cart()
    first = cart.add("MUG", 900, 1)
    again = cart.add("MUG", 900, 2)
    assert again is first
    assert first.qty == 3
    assert [line.sku for line in cart.lines] == ["MUG"]


def test_add_appends_a_new_line_for_a_new_sku():
    cart = Cart()
    mug = cart.add("MUG", 900)
    tee = cart.add("TEE", 1500, 2)
    assert (tee.sku, tee.unit_cents, tee.qty) == ("TEE", 1500, 2)
    assert cart.lines == [mug, tee]
PY
step pytest --quest submit --quest-id "$quest"
step pytest --quest-status

echo
echo "demo project left in $work/example_project (quest.json is its ratchet file)"
