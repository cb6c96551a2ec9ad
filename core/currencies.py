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
