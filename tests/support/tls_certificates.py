"""Certificates for receivers that fail TLS the ways real ones do (tests/support/receiver.py),
made by `trustme`: a test CA that only the tests which need it trust (through the delivery
policy's `ca_bundle`), and server contexts for a good, an expired, a wrong-host and a
self-signed certificate."""
from __future__ import annotations

import datetime as dt
from pathlib import Path
import ssl

import trustme


class LocalCA:
    def __init__(self, folder: Path):
        self.ca = trustme.CA()
        self.bundle = str(folder / "test-ca.pem")
        self.ca.cert_pem.write_to_path(self.bundle)

    def server(self, *hosts: str, expired: bool = False) -> ssl.SSLContext:
        """A server context with a certificate of this CA for `hosts` (expired in 2020 if asked)."""
        dates = {}
        if expired:
            dates = dict(not_before=dt.datetime(2019, 1, 1, tzinfo=dt.timezone.utc),
                         not_after=dt.datetime(2020, 1, 1, tzinfo=dt.timezone.utc))
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        self.ca.issue_cert(*hosts, **dates).configure_cert(context)
        return context


def self_signed_server(folder: Path) -> ssl.SSLContext:
    """A server presenting a certificate signed by its own key (a fresh CA's own certificate)."""
    own = trustme.CA()
    cert, key = folder / "self-signed.pem", folder / "self-signed.key"
    own.cert_pem.write_to_path(str(cert))
    own.private_key_pem.write_to_path(str(key))
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(str(cert), str(key))
    return context
