"""ISO 4217 currencies and their minor units: how many decimals an amount in each may have.

The list is ISO 4217's active codes (funds codes included) that have minor units; codes without
any (gold, test codes, XXX) are not money a merchant can invoice in. Amounts in a currency are
written with exactly its minor units ("1500" yen, "10.00" dollars, "1.250" dinars)."""

_ZERO = "BIF CLP DJF GNF ISK JPY KMF KRW PYG RWF UGX UYI VND VUV XAF XOF XPF"
_THREE = "BHD IQD JOD KWD LYD OMR TND"
_FOUR = "CLF UYW"
_TWO = (
    "AED AFN ALL AMD AOA ARS AUD AWG AZN BAM BBD BDT BMD BND BOB BOV BRL BSD BTN BWP BYN BZD "
    "CAD CDF CHE CHF CHW CNY COP COU CRC CUP CVE CZK DKK DOP DZD EGP ERN ETB EUR FJD FKP GBP "
    "GEL GHS GIP GMD GTQ GYD HKD HNL HTG HUF IDR ILS INR IRR JMD KES KGS KHR KPW KYD KZT LAK "
    "LBP LKR LRD LSL MAD MDL MGA MKD MMK MNT MOP MRU MUR MVR MWK MXN MXV MYR MZN NAD NGN NIO "
    "NOK NPR NZD PAB PEN PGK PHP PKR PLN QAR RON RSD RUB SAR SBD SCR SDG SEK SGD SHP SLE SOS "
    "SRD SSP STN SVC SYP SZL THB TJS TMT TOP TRY TTD TWD TZS UAH USD USN UYU UZS VED VES WST "
    "XCD XCG YER ZAR ZMW ZWG"
)

MINOR_UNITS: dict[str, int] = {
    **{code: 0 for code in _ZERO.split()},
    **{code: 2 for code in _TWO.split()},
    **{code: 3 for code in _THREE.split()},
    **{code: 4 for code in _FOUR.split()},
}
MOST_MINOR_UNITS = max(MINOR_UNITS.values())


def is_currency(code) -> bool:
    return isinstance(code, str) and code in MINOR_UNITS


def minor_units(code: str) -> int:
    """The decimals of `code`; KeyError for a code that is not an ISO 4217 currency with minor units."""
    return MINOR_UNITS[code]


# What each rate source can price (against the US dollar), so SUPPORTED_CURRENCIES can default to it
# without asking the network at start-up. The sandbox's are its starter table (migration 0019).
SANDBOX_STARTER = ("USD", "EUR", "GBP", "CHF", "CAD", "AUD", "JPY", "SGD", "BRL", "MXN")
# The ECB's daily reference rates (published against the euro; the euro itself is the base).
ECB_PRICED = ("USD", "EUR", "AUD", "BRL", "CAD", "CHF", "CNY", "CZK", "DKK", "GBP", "HKD", "HUF", "IDR", "ILS",
              "INR", "ISK", "JPY", "KRW", "MXN", "MYR", "NOK", "NZD", "PHP", "PLN", "RON", "SEK", "SGD", "THB",
              "TRY", "ZAR")
# ExchangeRate-API's open access lists about 160 codes; these are the ones Tender offers by default.
EXCHANGERATE_API_PRICED = ECB_PRICED + ("AED", "ARS", "BHD", "CLP", "COP", "EGP", "KWD", "NGN", "PEN", "SAR",
                                        "TWD", "VND")
PRICED_BY = {"sandbox": SANDBOX_STARTER, "ecb": ECB_PRICED, "exchangerate_api": EXCHANGERATE_API_PRICED}
# The currency a payout asset is worth: dollar stablecoins are dollars, euro ones euros.
_ASSET_CURRENCIES = {"usdc": "USD", "usdt": "USD", "dai": "USD", "pyusd": "USD", "usd1": "USD",
                     "eurc": "EUR", "eure": "EUR"}


def asset_currency(asset_code: str) -> str | None:
    """The currency an output asset (`usdc.near`) is worth, or None for one that is not money."""
    return _ASSET_CURRENCIES.get(asset_code.split(".", 1)[0])


def priced_by(sources: tuple[str, ...]) -> tuple[str, ...]:
    """The currencies every listed source prices (so each can be checked against the others),
    in the first source's order; with no source, only the dollar (at par with the payout asset)."""
    if not sources:
        return ("USD",)
    return tuple(code for code in PRICED_BY[sources[0]] if all(code in PRICED_BY[other] for other in sources))
