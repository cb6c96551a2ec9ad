"""A mail's subject, plain-text and HTML parts from one template (docs/email.md#how-mail-is-sent), and the
message itself with the headers every mail carries.

Each kind is one Jinja file in services/mail/templates/, rendered twice: once by an environment that
escapes every value for HTML, once by one that writes plain text. The template says what to say
through two helpers whose two versions live here (`paragraph`, `facts`), so no wording
is written twice. No images, no links that track, no secret: the context holds only what the
template shows.

Header injection is impossible by construction: every header is set through `EmailMessage`, whose
policy refuses a CR or LF in a value, and the subject is folded onto one line before it is set.
"""
from __future__ import annotations

import datetime as dt
import hashlib
from email.message import EmailMessage
from email.policy import SMTP
from email.utils import format_datetime
import os
import textwrap

import jinja2
from markupsafe import Markup

TEMPLATES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "templates")
_POLICY = SMTP.clone(raise_on_defect=True)


def _text_paragraph(caller) -> str:
    return textwrap.fill(" ".join(caller().split()), 72) + "\n\n"


def _text_facts(rows) -> str:
    rows = [(label, value) for label, value in rows if value not in (None, "")]
    width = max((len(label) for label, _ in rows), default=0)
    return "".join(f"{label + ':':<{width + 2}}{value}\n" for label, value in rows) + "\n"


def _html_paragraph(caller) -> Markup:
    return Markup('<p style="margin:0 0 16px">') + caller() + Markup("</p>")


def _html_facts(rows) -> Markup:
    cells = Markup("").join(
        Markup('<tr><th style="text-align:left;padding:4px 16px 4px 0;font-weight:600;vertical-align:top">{}</th>'
               '<td style="padding:4px 0;font-family:ui-monospace,Menlo,monospace;word-break:break-all">{}</td></tr>')
        .format(label, value) for label, value in rows if value not in (None, ""))
    return Markup('<table style="border-collapse:collapse;margin:0 0 16px">') + cells + Markup("</table>")


def _environment(*, html: bool) -> jinja2.Environment:
    environment = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES), autoescape=html,
                                     undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    environment.globals.update(
        paragraph=_html_paragraph if html else _text_paragraph,
        facts=_html_facts if html else _text_facts,
        layout="layout.html" if html else "layout.txt")
    return environment


_TEXT, _HTML = _environment(html=False), _environment(html=True)


def kinds() -> tuple[str, ...]:
    """Every kind of mail there is a template for."""
    return tuple(sorted(name[:-len(".jinja")] for name in os.listdir(TEMPLATES) if name.endswith(".jinja")))


def render(kind: str, context: dict) -> tuple[str, str, str]:
    """(subject, plain text, HTML) of a mail of `kind` with `context`."""
    text_template, html_template = _TEXT.get_template(f"{kind}.jinja"), _HTML.get_template(f"{kind}.jinja")
    subject = "".join(text_template.blocks["subject"](text_template.new_context(dict(context))))
    return " ".join(subject.split()), text_template.render(context), html_template.render(context)


def message(*, sender: str, recipient: str, subject: str, text: str, html: str, message_id: str,
            date: dt.datetime) -> EmailMessage:
    """The message as it is sent, every attempt alike."""
    mail = EmailMessage(policy=_POLICY)
    mail["From"] = sender
    mail["To"] = recipient
    mail["Subject"] = subject
    mail["Date"] = format_datetime(date.replace(tzinfo=dt.timezone.utc))
    mail["Message-ID"] = message_id
    mail["Auto-Submitted"] = "auto-generated"        # RFC 3834: no vacation replies, no loops
    mail.set_content(text, cte="quoted-printable")
    mail.add_alternative(html, subtype="html", cte="quoted-printable")
    # Named after the Message-ID, not random: every attempt sends the very same bytes.
    mail.set_boundary("=_" + hashlib.sha256(message_id.encode()).hexdigest()[:32])
    return mail
