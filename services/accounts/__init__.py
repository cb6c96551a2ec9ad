"""Stores and their API keys."""
