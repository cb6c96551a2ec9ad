"""Domain errors carry a code from docs/api.md#errors; blueprints/errors.py maps codes to HTTP."""


class DomainError(Exception):
    def __init__(self, code: str, message: str, *, param: str | None = None, details: dict | None = None):
        super().__init__(message)
        self.code = code
        self.message = message
        self.param = param
        self.details = details or {}


class Unavailable(DomainError):
    """503: something Tender needs (the swap provider) did not answer; the same request may be
    repeated after `retry_after` seconds (the `Retry-After` header)."""

    status = 503

    def __init__(self, code: str, message: str, *, retry_after: int = 5):
        super().__init__(code, message)
        self.retry_after = retry_after


class NotFound(DomainError):
    def __init__(self, code: str, message: str = "No such object."):
        super().__init__(code, message)


def validation_error(param: str, message: str) -> DomainError:
    return DomainError("validation_error", f"{param}: {message}", param=param)
