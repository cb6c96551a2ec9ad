"""Webhooks: endpoints, the outbox and its fan-out, delivery runs, sending, signing, address rules, replays."""
