"""The running app's settings, for views (services get values as arguments instead)."""
from flask import current_app

from config import Settings


def settings() -> Settings:
    return current_app.extensions["tender.settings"]


def provider():
    """This process's swap provider (providers.shared)."""
    import providers

    return providers.shared(settings())
