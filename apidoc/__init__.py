"""The OpenAPI contract: operations.py says what each route is, document.py builds the document."""
