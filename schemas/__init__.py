"""marshmallow request and response shapes. No Flask, no database, no models."""
