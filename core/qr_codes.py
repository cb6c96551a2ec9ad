"""QR codes for the hosted checkout page, drawn as SVG (the `qrcode` package; no imaging library)."""
from __future__ import annotations

import qrcode
from qrcode.image.svg import SvgPathFillImage


def svg(text: str) -> str:
    """A scalable QR code of `text` on a white background, with the standard four-module quiet zone."""
    image = qrcode.make(text, image_factory=SvgPathFillImage, border=4,
                        error_correction=qrcode.constants.ERROR_CORRECT_M)
    return image.to_string(encoding="unicode")
