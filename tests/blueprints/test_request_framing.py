"""Where a request ends, as the event loop reads it (blueprints/request_framing.py): only the plain
framings are measured; anything else is gunicorn's to refuse at once."""
import pytest

from blueprints.request_framing import MALFORMED, MAX_BODY_BYTES, TOO_LARGE, chunked_body_end, framing_of


def _head(*headers: str) -> bytes:
    return ("\r\n".join(["POST /v1/invoices HTTP/1.1", "Host: 127.0.0.1", *headers]) + "\r\n\r\n").encode()


@pytest.mark.parametrize("headers, kind, length", [
    ((), "none", 0),
    (("Content-Length: 12",), "length", 12),
    (("content-length:  0 ",), "length", 0),
    (("Transfer-Encoding: chunked",), "chunked", 0),
    (("Transfer-Encoding: gzip, Chunked",), "chunked", 0),
    (("Content-Length: 1", "Content-Length: 1"), "other", 0),          # gunicorn refuses two
    (("Content-Length: 2", "Transfer-Encoding: chunked"), "other", 0),  # and both framings
    (("Content-Length: +2",), "other", 0),
    (("Transfer-Encoding: xchunked",), "other", 0),                    # 501 from gunicorn
    ((f"Content-Length: {MAX_BODY_BYTES + 1}",), "too_large", MAX_BODY_BYTES + 1),    # the event loop's 413
    (("Content-Length : 2",), "other", 0),
    (("X-Folded: a", " b", "Content-Length: 2"), "other", 0),
])
def test_the_framing_of_a_head(headers, kind, length):
    framing = framing_of(_head(*headers))
    assert (framing.kind, framing.length) == (kind, length)


def test_a_leading_empty_line_does_not_hide_the_framing():
    assert framing_of(b"\r\n" + _head("Content-Length: 5")).kind == "length"


def test_expect_100_continue_is_noticed():
    assert framing_of(_head("Content-Length: 5", "Expect: 100-Continue")).expects_continue


@pytest.mark.parametrize("body, end", [
    (b"2\r\n{}\r\n0\r\n\r\nGET / HTTP/1.1", 12),        # what follows is the next request
    (b"2;name=value\r\n{}\r\n0\r\n\r\n", 23),
    (b"0\r\nX-Trailer: 1\r\n\r\n", 19),
    (b"2\r\n{}\r\n", None),
    (b"2\r\n{}\r\n0\r\n", None),
    (b"2\r\n{}XX0\r\n\r\n", MALFORMED),
    (b"zz\r\n", MALFORMED),
    (f"{MAX_BODY_BYTES + 1:x}\r\n".encode(), TOO_LARGE),      # known from the size line, before the data
])
def test_the_end_of_a_chunked_body(body, end):
    assert chunked_body_end(body, 0) == end
