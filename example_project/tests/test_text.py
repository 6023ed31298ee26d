from shop.text import format_price, slugify, to_cents


def test_slugify_strips_punctuation_and_accents():
    assert slugify("Blue Mug (Large)") == "blue-mug-large"
    assert slugify("Crème Brûlée Set") == "creme-brulee-set"


def test_to_cents():
    assert to_cents(12) == 1_200


def test_format_price_euro():
    assert format_price(1_999) == "19,99 €"


def test_format_price_dollar_negative():
    assert format_price(-250, "USD") == "-$2.50"
