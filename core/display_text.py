"""Text that buyer pages display (store names, payment link titles) must read as what it is: no
bidirectional overrides or isolates, which reorder what follows (`\u202e` turns "exe.pdf" around),
and no zero-width or invisible characters, which make two different names look the same
(docs/security.md)."""
from __future__ import annotations

import re
import unicodedata

# Bidi marks, embeddings, overrides and isolates; zero-width spaces and joiners, word joiner and
# invisible operators; the byte-order mark; the Mongolian vowel separator.
_SPOOFING = re.compile("[\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]")


# Letters and symbols that draw nothing: the Hangul fillers (U+115F, U+1160, U+3164, U+FFA0), the
# braille blank, the combining grapheme joiner, Khmer's inherent vowels, and variation selectors.
_DRAWS_NOTHING = re.compile("[\u115f\u1160\u3164\uffa0\u2800\u034f\u17b4\u17b5\u180b-\u180d\ufe00-\ufe0f"
                            "\U000e0100-\U000e01ef]")
# Spaces and separators (U+2028, U+2029 among them), controls, and format characters: zero-width
# ones, bidi marks, and the tag characters U+E0000-U+E007F.
_INVISIBLE_CATEGORIES = ("Zs", "Zl", "Zp", "Cc", "Cf")


def is_blank(text: str) -> bool:
    """True when `text` would show nothing at all: only spaces, separators, format characters
    and the letters that draw nothing. Such a title or name reads as empty on the page."""
    return all(unicodedata.category(char) in _INVISIBLE_CATEGORIES or _DRAWS_NOTHING.match(char) for char in text)


def spoofing_problem(text: str) -> str | None:
    """Why `text` may not be displayed to buyers as given, or None."""
    found = _SPOOFING.search(text)
    if found is None:
        return None
    return f"must not contain direction overrides or invisible characters (U+{ord(found.group()):04X})"
