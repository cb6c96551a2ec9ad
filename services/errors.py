"""Domain errors carry a code from docs/api.md#errors; blueprints/errors.py maps codes to HTTP."""


class DomainError(Exception):
    def __init__(self, code: str, message: str, *, param: str | None = None, details: dict | None = None):
        super().__init__(message)
        self.code = code
        self.message = message
        self.param = param
        self.details = details or {}


class NotFound(DomainError):
    def __init__(self, code: str, message: str = "No such object."):
        super().__init__(code, message)


def validation_error(param: str, message: str) -> DomainError:
    return DomainError("validation_error", f"{param}: {message}", param=param)
