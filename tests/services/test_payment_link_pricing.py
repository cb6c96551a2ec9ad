"""resolve_pricing: the amount-mode rules shared by create and PATCH (no database)."""
from decimal import Decimal

import pytest

from core.errors import DomainError
from models.payment_links import CUSTOMER_DEFINED, FIXED
from services.payment_links import resolve_pricing

D = Decimal


def test_fixed_needs_amount_and_drops_bounds():
    assert resolve_pricing({}, {"amount_mode": FIXED, "amount": D("5")}) == {
        "amount_mode": FIXED, "amount": D("5"), "min_amount": None, "max_amount": None}
    with pytest.raises(DomainError) as error:
        resolve_pricing({}, {"amount_mode": FIXED})
    assert error.value.param == "amount"


@pytest.mark.parametrize("bound", ["min_amount", "max_amount"])
def test_fixed_refuses_bounds(bound):
    with pytest.raises(DomainError) as error:
        resolve_pricing({}, {"amount_mode": FIXED, "amount": D("5"), bound: D("1")})
    assert (error.value.code, error.value.param) == ("validation_error", bound)


def test_customer_defined_refuses_amount_and_orders_bounds():
    with pytest.raises(DomainError) as error:
        resolve_pricing({}, {"amount_mode": CUSTOMER_DEFINED, "amount": D("5")})
    assert error.value.param == "amount"
    with pytest.raises(DomainError) as error:
        resolve_pricing({}, {"amount_mode": CUSTOMER_DEFINED, "min_amount": D("10"), "max_amount": D("9.99")})
    assert error.value.param == "max_amount"
    assert resolve_pricing({}, {"amount_mode": CUSTOMER_DEFINED, "min_amount": D("10"), "max_amount": D("10")})[
        "max_amount"] == D("10")
    assert resolve_pricing({}, {"amount_mode": CUSTOMER_DEFINED}) == {
        "amount_mode": CUSTOMER_DEFINED, "amount": None, "min_amount": None, "max_amount": None}


def test_patch_merges_with_current_and_checks_the_result():
    current = {"amount_mode": CUSTOMER_DEFINED, "amount": None, "min_amount": D("5"), "max_amount": D("50")}
    assert resolve_pricing(current, {"max_amount": D("60")})["min_amount"] == D("5")
    assert resolve_pricing(current, {"min_amount": None})["min_amount"] is None    # null clears a bound
    with pytest.raises(DomainError) as error:
        resolve_pricing(current, {"min_amount": D("51")})     # above the kept max
    assert error.value.param == "max_amount"


def test_switching_mode_drops_the_old_modes_fields():
    fixed = {"amount_mode": FIXED, "amount": D("9"), "min_amount": None, "max_amount": None}
    assert resolve_pricing(fixed, {"amount_mode": CUSTOMER_DEFINED})["amount"] is None
    custom = {"amount_mode": CUSTOMER_DEFINED, "amount": None, "min_amount": D("1"), "max_amount": D("2")}
    with pytest.raises(DomainError):
        resolve_pricing(custom, {"amount_mode": FIXED})       # the new mode's amount must be given
    assert resolve_pricing(custom, {"amount_mode": FIXED, "amount": D("3")})["min_amount"] is None
