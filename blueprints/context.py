"""The running app's settings, for views (services get values as arguments instead)."""
from flask import current_app

from config import Settings


def settings() -> Settings:
    return current_app.extensions["tender.settings"]


def provider():
    """The app's swap provider, built once per process from its settings."""
    from providers import get_provider

    if "tender.provider" not in current_app.extensions:
        current_app.extensions["tender.provider"] = get_provider(settings())
    return current_app.extensions["tender.provider"]
