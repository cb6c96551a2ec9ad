"""A local HTTP server speaking the two public rate protocols Tender reads (docs/currencies.md):
the ECB's `eurofxref-daily.xml` and ExchangeRate-API's open access `/v6/latest/USD`, in their
published shapes. Stdlib only; 127.0.0.1 on an ephemeral port; counts the requests per path.

    with RateServer() as server:
        server.ecb(day="2026-11-26", per_euro={"USD": "1.0842", "JPY": "163.10"})
        EcbReferenceRates(server.url + ECB_PATH).fetch()
"""
from __future__ import annotations

import collections
import datetime as dt
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
import json
import threading

ECB_PATH = "/stats/eurofxref/eurofxref-daily.xml"
ER_API_PATH = "/v6/latest/USD"


def ecb_document(day: str, per_euro: dict[str, str]) -> bytes:
    cubes = "".join(f"\n\t\t\t<Cube currency='{code}' rate='{rate}'/>" for code, rate in per_euro.items())
    return (f"""<?xml version="1.0" encoding="UTF-8"?>
<gesmes:Envelope xmlns:gesmes="http://www.gesmes.org/xml/2002-08-01" xmlns="http://www.ecb.int/vocabulary/2002-08-01/eurofxref">
\t<gesmes:subject>Reference rates</gesmes:subject>
\t<gesmes:Sender>
\t\t<gesmes:name>European Central Bank</gesmes:name>
\t</gesmes:Sender>
\t<Cube>
\t\t<Cube time='{day}'>{cubes}
\t\t</Cube>
\t</Cube>
</gesmes:Envelope>""").encode()


def er_api_document(updated: dt.datetime, per_dollar: dict[str, str]) -> bytes:
    """Rates are JSON numbers in the real document: written here as such, not as strings."""
    stamp = int(updated.replace(tzinfo=dt.timezone.utc).timestamp())
    rates = ", ".join(f'"{code}": {rate}' for code, rate in {"USD": "1", **per_dollar}.items())
    return ('{"result": "success", "provider": "https://www.exchangerate-api.com", '
            '"documentation": "https://www.exchangerate-api.com/docs/free", '
            '"terms_of_use": "https://www.exchangerate-api.com/terms", '
            f'"time_last_update_unix": {stamp}, "time_last_update_utc": "{updated:%a, %d %b %Y %H:%M:%S} +0000", '
            f'"time_next_update_unix": {stamp + 86400}, "time_eol_unix": 0, "base_code": "USD", '
            f'"rates": {{{rates}}}}}').encode()


class RateServer:
    def __init__(self):
        self.answers: dict[str, tuple[int, bytes, str]] = {}
        self.requests = collections.Counter()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                server.requests[self.path] += 1
                status, body, media_type = server.answers.get(self.path, (404, b"not found", "text/plain"))
                self.send_response(status)
                self.send_header("Content-Type", media_type)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def ecb(self, *, day: str, per_euro: dict[str, str]) -> None:
        self.answer(ECB_PATH, 200, ecb_document(day, per_euro), "text/xml")

    def er_api(self, *, updated: dt.datetime, per_dollar: dict[str, str]) -> None:
        self.answer(ER_API_PATH, 200, er_api_document(updated, per_dollar), "application/json")

    def answer(self, path: str, status: int, body: bytes, media_type: str = "text/plain") -> None:
        self.answers[path] = (status, body, media_type)

    def __enter__(self) -> RateServer:
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
