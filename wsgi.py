"""The WSGI entry point (`gunicorn wsgi:app`, `flask --app wsgi`)."""
import os
import sys

from app import create_app
from config import ConfigError, load_settings

try:
    settings = load_settings(os.environ)
except ConfigError as error:
    sys.stderr.write(f"tender: configuration error: {error}\n")
    raise SystemExit(2) from None

app = create_app(settings)
