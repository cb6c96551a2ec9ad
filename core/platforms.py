"""Storefront platforms served by the integration routes. A second platform is a new entry here."""
PLATFORMS = ("woocommerce",)
PLATFORM_NAMES = {"woocommerce": "WooCommerce"}       # as each platform writes its own name


def platform_scopes(platform: str) -> tuple[str, ...]:
    return (f"{platform}:connect", f"{platform}:status", f"{platform}:disconnect")
