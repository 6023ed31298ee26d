from shop.shipping import Carrier, shipping_cost


def test_light_parcel():
    assert shipping_cost(800) == 490


def test_medium_parcel():
    assert shipping_cost(3_000) == 690


def test_standard_carrier():
    carrier = Carrier.standard()
    assert carrier.name == "ParcelPost"
    assert carrier.delivery_days() == 3
