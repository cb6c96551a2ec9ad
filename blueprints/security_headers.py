"""The headers every response carries (docs/security.md), the app's and gunicorn's own refusals alike."""
from __future__ import annotations

from config import Settings

# JSON needs no script, style or frame: the CSP allows nothing.
SECURITY_HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "Content-Security-Policy": "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
}


def security_headers_for(settings: Settings) -> dict:
    headers = dict(SECURITY_HEADERS)
    if settings.public_base_url.startswith("https://"):
        # Only behind https: over plain http (a laptop, tests) the header would be ignored or harmful.
        headers["Strict-Transport-Security"] = "max-age=31536000; includeSubDomains"
    return headers
