"""Domain rules as plain functions, shared by HTTP handlers and jobs. No Flask here."""
