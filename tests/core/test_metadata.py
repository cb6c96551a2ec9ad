"""core/metadata.py: the metadata rules of docs/api.md#money-strings-and-sizes."""
import pytest

from core.metadata import clean_metadata, is_secret_value, is_sensitive_key

WORDS = ["password", "passwd", "secret", "token", "api_key", "apikey", "private_key", "mnemonic",
         "seed_phrase", "card_number", "cvv", "cvc", "ssn", "authorization",
         "passphrase", "security_code", "recovery_phrase", "recovery_code"]


@pytest.mark.parametrize("word", WORDS)
def test_each_sensitive_word_is_caught_in_any_case_and_inside_a_key(word):
    assert is_sensitive_key(word)
    assert is_sensitive_key(word.upper())
    assert is_sensitive_key(f"customer_{word}_2")


@pytest.mark.parametrize("key", ["API-Key", "api key", "Private-Key", "seed phrase", "Card-Number", "card number"])
def test_dashes_and_spaces_read_as_underscores(key):
    assert is_sensitive_key(key)


@pytest.mark.parametrize("key", ["cardNumber", "card_number", "CardNumber", "privateKey", "apiKey", "APIKey",
                                 "seedPhrase", "accessToken", "clientSecret", "pass_word", "pwd", "userPwd",
                                 "seed", "wallet_seed", "cvv2", "cardCVC", "x-authorization",
                                 "pin", "PIN", "card_pin", "pinCode", "Pin-Number", "wallet pin", "passPhrase",
                                 "Wallet-Passphrase", "securityCode", "Security Code", "recovery phrase",
                                 "RecoveryPhrase", "recovery-code"])
def test_camel_snake_and_kebab_keys_are_folded_alike(key):
    assert is_sensitive_key(key)


@pytest.mark.parametrize("key", ["order_id", "customer", "note", "api", "key", "card", "private", "phrase",
                                 "apikee", "seedling", "linseed_oil", "cardholder_name", "keyword", "",
                                 "shipping", "shipping_address", "pinned", "spinner", "opinion", "security",
                                 "code", "recovery", "pass"])
def test_ordinary_keys_are_not_sensitive(key):
    assert not is_sensitive_key(key)


def test_a_value_that_is_one_of_our_credentials_is_dropped_whatever_its_key():
    key, secret = "sk_live_" + "ab12" * 10, "whsec_" + "0f" * 32
    assert is_secret_value(key) and is_secret_value(f"mine: {secret}")
    assert clean_metadata({"note": key, "ref": secret, "order": "A1", "short": "sk_live_abc"}) == {
        "order": "A1", "short": "sk_live_abc"}


def test_sensitive_keys_are_dropped_and_the_rest_kept():
    assert clean_metadata({"order": "A1", "Password": "x", "n": 1, "user token": "t"}) == {"order": "A1", "n": 1}


def test_values_may_be_strings_numbers_booleans_or_null():
    value = {"s": "x", "i": 1, "t": True, "f": False, "z": None}
    assert clean_metadata(value) == value


def test_decimal_numbers_become_json_floats():
    from decimal import Decimal

    cleaned = clean_metadata({"weight": Decimal("1.25")})
    assert cleaned == {"weight": 1.25} and type(cleaned["weight"]) is float


def test_a_number_beyond_float_range_is_refused():
    from decimal import Decimal

    with pytest.raises(ValueError, match="finite"):
        clean_metadata({"n": Decimal("1e400")})


def test_limits_are_inclusive():
    assert len(clean_metadata({f"k{i}": i for i in range(50)})) == 50
    assert clean_metadata({"k" * 40: "v" * 500}) == {"k" * 40: "v" * 500}


@pytest.mark.parametrize("value, message", [
    ({f"k{i}": i for i in range(51)}, "50 keys"),
    ({"k" * 41: 1}, "40 characters"),
    ({"k": "v" * 501}, "500 characters"),
    ({"k": {"a": 1}}, "flat"),
    ({"k": [1]}, "flat"),
    (["a"], "object"),
    ("text", "object"),
    (None, "object"),
])
def test_outside_the_rules_is_refused(value, message):
    with pytest.raises(ValueError, match=message):
        clean_metadata(value)
