"""Text that buyer pages display (store names, payment link titles) must read as what it is: no
bidirectional overrides or isolates, which reorder what follows (`\u202e` turns "exe.pdf" around),
and no zero-width or invisible characters, which make two different names look the same
(docs/security.md)."""
from __future__ import annotations

import re

# Bidi marks, embeddings, overrides and isolates; zero-width spaces and joiners, word joiner and
# invisible operators; the byte-order mark; the Mongolian vowel separator.
_SPOOFING = re.compile("[\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]")


def spoofing_problem(text: str) -> str | None:
    """Why `text` may not be displayed to buyers as given, or None."""
    found = _SPOOFING.search(text)
    if found is None:
        return None
    return f"must not contain direction overrides or invisible characters (U+{ord(found.group()):04X})"
