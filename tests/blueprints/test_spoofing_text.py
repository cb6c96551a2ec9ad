"""Names and titles the buyer pages display refuse direction overrides and invisible characters
(docs/security.md); right-to-left scripts themselves are welcome."""
import pytest

from core.clock import utcnow
from core.errors import DomainError
from services.accounts.stores import create_store

SPOOFS = ["\u202e", "\u202d", "\u2066", "\u2069", "\u200f", "\u061c", "\u200b", "\u200c", "\u200d", "\u2060", "\ufeff"]


def _link(client, auth, title):
    return client.post("/v1/payment-links", headers=auth, json={
        "title": title, "amount_mode": "fixed_amount", "amount": "5.00", "currency": "USD"})


@pytest.mark.parametrize("char", SPOOFS, ids=[f"U+{ord(c):04X}" for c in SPOOFS])
def test_a_payment_link_title_refuses_it(client, auth, char):
    response = _link(client, auth, f"Invoice{char}fdp.exe")
    assert response.status_code == 400, response.json
    assert response.json["error"]["code"] == "validation_error" and response.json["error"]["param"] == "title"
    assert f"U+{ord(char):04X}" in response.json["error"]["message"]


def test_an_update_refuses_it_too_and_plain_rtl_text_is_fine(client, auth):
    created = _link(client, auth, "شال صوف")
    assert created.status_code == 201, created.json
    update = client.patch(f"/v1/payment-links/{created.json['id']}", headers=auth, json={"title": "ok\u202e"})
    assert update.status_code == 400 and update.json["error"]["param"] == "title"


@pytest.mark.parametrize("char", ["\u202e", "\u200b"])
def test_a_store_name_refuses_it(app, char):
    with pytest.raises(DomainError) as refused:
        create_store(name=f"Shop{char}", now=utcnow())
    assert refused.value.param == "name"


# Text that shows nothing: Hangul fillers, tag characters, line and paragraph separators, zero-width
# and other format characters, the braille blank, variation selectors.
INVISIBLE_ONLY = ["\u115f", "\u3164\u3164", "\uffa0", "\u1160", "\U000e0041\U000e0042", "\u2028", "\u2029",
                  "\u200b\u3164", "\u2800", "\ufe0f", " \u3164 \u2028 "]


@pytest.mark.parametrize("title", INVISIBLE_ONLY, ids=[" ".join(f"U+{ord(c):04X}" for c in t) for t in INVISIBLE_ONLY])
def test_a_title_of_invisible_characters_only_is_blank(client, auth, title):
    response = _link(client, auth, title)
    assert response.status_code == 400, response.json
    assert response.json["error"]["param"] == "title" and "blank" in response.json["error"]["message"]


@pytest.mark.parametrize("name", ["\u3164", "\u115f\u1160", "\U000e0020", "\u2028"])
def test_a_store_name_of_invisible_characters_only_is_refused(app, name):
    with pytest.raises(DomainError) as refused:
        create_store(name=name, now=utcnow())
    assert refused.value.param == "name"


def test_visible_text_around_them_is_still_a_title(client, auth):
    assert _link(client, auth, "Scarf 🏴\U000e0067\U000e0062\U000e0065\U000e006e\U000e0067\U000e007f").status_code == 201
    assert _link(client, auth, "한글 상품").status_code == 201
