"""E-mail as Documents: ``.eml`` (the standard ``email`` package) and Outlook ``.msg`` (extract-msg).

The text opens with the subject as a ``# `` heading and the header fields a question may ask about as a
two-column table under ``| Field | Email message |``: ``From (sender)``, ``Sent (date)``, ``To (recipients)``,
``Cc (copied to)``, ``Subject`` (the name a mail program prints and the word a question uses; a table row is read,
and its support checked, with its row's and column's names: "who sent the email about X?"), then the body
(plain text; an HTML-only body is read as HTML pages are, ``html.py``), then each attachment under
``## Attachment: <name>``, read by its type: Word, PowerPoint, Excel, CSV, PDF, HTML, text, and attached
e-mails (``.eml``, ``message/rfc822``, and Outlook items attached to a ``.msg``), each in turn, up to
``MAX_DEPTH`` levels. An attachment of another type, or one that cannot be read, is named with the reason in the
text, and the mail still loads. Attached files' headings sit under their attachment's heading.

Metadata: ``from``, ``to`` (a list), ``date`` (ISO 8601), ``subject`` (also the title); a sidecar
overrides them (``acl``, ...). Refused, by name: a ``.msg`` that is not an OLE compound file (a renamed file,
an ``.eml`` saved as ``.msg``), a corrupt one, a mail with neither subject nor text.
"""

from __future__ import annotations

import email
import email.policy
import email.utils
import io
from pathlib import Path
from typing import Any

from ragline.errors import InputError
from ragline.ingest.files import DEFAULT_MAX_BYTES, decode_text, read_capped
from ragline.ingest.structured import OLE_MAGIC, Blocks, structured_document, text_cap
from ragline.ingest.tables import markdown_tables
from ragline.types import Document

MAX_DEPTH = 3
# The header fields a question about a mail names ("who sent", "when was it sent"), each under the name a mail
# program prints and the word a question uses; the values' column names what they describe.
HEADER_TABLE = ("Field", "Email message")
_FIELDS = (
    ("From", "From (sender)"),
    ("Date", "Sent (date)"),
    ("To", "To (recipients)"),
    ("Cc", "Cc (copied to)"),
    ("Subject", "Subject"),
)


def load_eml(path: Path, relative: Path, max_bytes: int = DEFAULT_MAX_BYTES) -> Document:
    """One ``.eml`` message as a Document; raises ``InputError`` saying what is wrong with it."""
    data = read_capped(path, max_bytes)
    blocks = Blocks(str(path), text_cap(max_bytes))
    message = email.message_from_bytes(data, policy=email.policy.default)
    metadata = eml_into(blocks, message, str(path))
    return structured_document(path, relative, blocks, metadata, metadata.get("subject", ""))


def eml_into(blocks: Blocks, message: Any, where: str, depth: int = 0) -> dict[str, Any]:
    """Write a parsed ``email.message.EmailMessage`` into ``blocks``; its header metadata back."""
    if not message.keys():
        raise InputError(where, "not an e-mail message (no header lines)")
    headers = {name: str(message.get(name, "") or "").strip() for name in ("Subject", "From", "To", "Cc", "Date")}
    body = message.get_body(preferencelist=("plain", "html"))
    text, html = "", False
    if body is not None:
        try:
            text, html = body.get_content(), body.get_content_subtype() == "html"
        except (LookupError, ValueError):  # an unknown charset: the payload as bytes, decoded as files are
            text, _ = decode_text(body.get_payload(decode=True) or b"", where)
    _head(blocks, headers)
    _body(blocks, text, html)
    for part in message.iter_attachments():
        name = part.get_filename() or ("message.eml" if part.get_content_type() == "message/rfc822" else "attachment")
        if part.get_content_type() == "message/rfc822":
            inner = part.get_content()
            _attachment(blocks, name, depth, lambda i=inner, n=name: eml_into(blocks, i, f"{where}: {n}", depth + 1))
        else:
            content = part.get_payload(decode=True) or b""
            _attachment(blocks, name, depth, lambda n=name, c=content: _file_into(blocks, n, c, where, depth))
    return _metadata(headers)


def load_msg(path: Path, relative: Path, max_bytes: int = DEFAULT_MAX_BYTES) -> Document:
    """One Outlook ``.msg`` file as a Document; raises ``InputError`` saying what is wrong with it."""
    import extract_msg

    data = read_capped(path, max_bytes)
    where = str(path)
    if not data.startswith(OLE_MAGIC):
        raise InputError(where, "not an Outlook .msg file (not an OLE compound file; an .eml renamed?)")
    try:
        message = extract_msg.openMsg(io.BytesIO(data), delayAttachments=False)
    except Exception as error:  # noqa: BLE001 (olefile and extract-msg raise many kinds on a damaged file)
        raise InputError(where, f"corrupt .msg file, cannot be read ({type(error).__name__}: {error})") from None
    blocks = Blocks(where, text_cap(max_bytes))
    try:
        metadata = msg_into(blocks, message, where)
    except InputError:
        raise
    except Exception as error:  # noqa: BLE001
        raise InputError(where, f"corrupt .msg file, cannot be read ({type(error).__name__}: {error})") from None
    finally:
        message.close()
    return structured_document(path, relative, blocks, metadata, metadata.get("subject", ""))


def msg_into(blocks: Blocks, message: Any, where: str, depth: int = 0) -> dict[str, Any]:
    """Write an opened extract-msg message into ``blocks``, attached messages in turn; its header metadata back."""
    headers = {
        "Subject": str(getattr(message, "subject", "") or "").strip(),
        "From": str(getattr(message, "sender", "") or "").strip(),
        "To": str(getattr(message, "to", "") or "").strip(),
        "Cc": str(getattr(message, "cc", "") or "").strip(),
        "Date": _msg_date(message),
    }
    _head(blocks, headers)
    body = getattr(message, "body", None) or ""
    html = getattr(message, "htmlBody", None) if not body else None
    _body(blocks, body if body else (html.decode("utf-8", "replace") if html else ""), bool(html))
    for attachment in getattr(message, "attachments", []) or []:
        name = str(getattr(attachment, "longFilename", None) or getattr(attachment, "name", None) or "attachment")
        content = getattr(attachment, "data", None)
        if isinstance(content, bytes):
            _attachment(blocks, name, depth, lambda n=name, c=content: _file_into(blocks, n, c, where, depth))
        elif hasattr(content, "attachments") and hasattr(content, "subject"):  # an attached Outlook item
            inner = f"{where}: {name}"
            _attachment(blocks, name, depth, lambda m=content, i=inner: msg_into(blocks, m, i, depth + 1))
        else:
            blocks.heading(2, f"Attachment: {name}")
            blocks.paragraph("(an embedded item that is not a file or a message: not read)")
    return _metadata(headers)


def _msg_date(message: Any) -> str:
    value = getattr(message, "date", None)
    if value is None:
        return ""
    return value.isoformat() if hasattr(value, "isoformat") else str(value).strip()


def _head(blocks: Blocks, headers: dict[str, str]) -> None:
    """The subject as the heading, then the header fields as a two-column table (``tables.py``): a table row is
    read, and its support checked, with its row's and column's names, so "who sent the email about X?" is
    answered from "| From (sender) | ... |" under "| Field | Email message |" below the heading "X"."""
    blocks.heading(1, headers["Subject"] or "(no subject)")
    rows = [[label, headers[name]] for name, label in _FIELDS if headers[name]]
    if rows:
        blocks.add(markdown_tables(rows, header=HEADER_TABLE))


def _body(blocks: Blocks, text: str, html: bool) -> None:
    if html:
        import lxml.html

        from ragline.ingest.html import html_to_text

        try:
            text = html_to_text(lxml.html.document_fromstring(text))
        except (ValueError, lxml.etree.ParserError):
            text = ""
        blocks.add(text)
        return
    for paragraph in text.replace("\r\n", "\n").split("\n\n"):
        blocks.paragraph(paragraph)


def _attachment(blocks: Blocks, name: str, depth: int, read: Any) -> None:
    """An attachment under its own heading; read in a nested scope (its headings below it, no anchors)."""
    blocks.heading(2, f"Attachment: {name}")
    if depth >= MAX_DEPTH:
        blocks.paragraph("(attached too deep: not read)")
        return
    saved = blocks.shift, blocks.anchoring
    blocks.shift, blocks.anchoring = blocks.shift + 2, False
    size, length = len(blocks.parts), blocks.length
    try:
        read()
    except InputError as error:
        del blocks.parts[size:]
        blocks.length = length
        blocks.shift, blocks.anchoring = saved
        blocks.paragraph(f"(not read: {error.reason})")
    finally:
        blocks.shift, blocks.anchoring = saved


def _file_into(blocks: Blocks, name: str, content: bytes, where: str, depth: int) -> None:
    """An attached file's text by its suffix (``InputError`` when unreadable or of another type)."""
    inner = f"{where}: {name}"
    suffix = Path(name).suffix.lower()
    if suffix == ".docx":
        from ragline.ingest.word import docx_into

        docx_into(blocks, content, inner)
    elif suffix == ".pptx":
        from ragline.ingest.slides import pptx_into

        pptx_into(blocks, content, inner)
    elif suffix in (".xlsx", ".xlsm"):
        from ragline.ingest.sheets import xlsx_into

        xlsx_into(blocks, content, inner)
    elif suffix == ".csv":
        from ragline.ingest.sheets import csv_into

        csv_into(blocks, decode_text(content, inner)[0], inner)
    elif suffix == ".pdf":
        from ragline.ingest.pdf import pdf_text

        blocks.add(pdf_text(content, inner))
    elif suffix in (".html", ".htm"):
        _body(blocks, decode_text(content, inner)[0], True)
    elif suffix in (".txt", ".md", ".markdown", ".rst"):
        blocks.add(decode_text(content, inner)[0])
    elif suffix == ".eml":
        message = email.message_from_bytes(content, policy=email.policy.default)
        eml_into(blocks, message, inner, depth + 1)
    else:
        raise InputError(inner, f"attachment of type {suffix or '(none)'!r} is not read")


def _metadata(headers: dict[str, str]) -> dict[str, Any]:
    out: dict[str, Any] = {"subject": headers["Subject"], "from": headers["From"]}
    to = [a.strip() for a in headers["To"].split(",") if a.strip()] if headers["To"] else []
    out["to"] = to
    if headers["Date"]:
        try:
            out["date"] = email.utils.parsedate_to_datetime(headers["Date"]).isoformat()
        except (TypeError, ValueError):
            out["date"] = headers["Date"]
    return out
