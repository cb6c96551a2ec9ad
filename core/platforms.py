"""Storefront platforms served by the integration routes. A second platform is a new entry here."""
PLATFORMS = ("woocommerce",)


def platform_scopes(platform: str) -> tuple[str, ...]:
    return (f"{platform}:connect", f"{platform}:status", f"{platform}:disconnect")
