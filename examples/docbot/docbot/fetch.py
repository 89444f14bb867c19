"""Downloading a document and turning it into text.

The allowlist (DOCBOT_FETCH_ALLOW) is checked before any DNS lookup or connection, for the
first URL and for every redirect hop (redirects are followed by hand for that reason).
"""

from __future__ import annotations

import asyncio
import io
import logging
import re
from dataclasses import dataclass
from html.parser import HTMLParser
from urllib.parse import urljoin, urlsplit

import aiohttp

log = logging.getLogger("docbot.fetch")

MAX_BYTES = 20 * 1024 * 1024
MAX_REDIRECTS = 5
DOCUMENT_TYPES = ("application/pdf", "text/html", "application/xhtml+xml", "text/plain",
                  "text/markdown")


@dataclass(frozen=True)
class Document:
    url: str
    title: str
    text: str
    content_type: str = "text/plain"


class FetchError(Exception):
    """The document could not be downloaded; str(e) is the reason shown to the user."""


class UnsupportedContent(Exception):
    """The server answered with a content type docbot cannot read."""

    def __init__(self, content_type: str):
        super().__init__(content_type)
        self.content_type = content_type


def host_allowed(url: str, allow: tuple[str, ...]) -> bool:
    try:
        host = (urlsplit(url).hostname or "").lower()
    except ValueError:
        return False
    return bool(host) and ("*" in allow or host in allow)


async def fetch_bytes(session: aiohttp.ClientSession, url: str, allow: tuple[str, ...],
                      timeout: float = 10.0) -> tuple[bytes, str]:
    """GET ``url`` (allowlist first, manual redirects); returns (body, mime type)."""
    current = url
    for _ in range(MAX_REDIRECTS + 1):
        if not host_allowed(current, allow):  # before any DNS lookup or connection
            raise FetchError("host not allowed")
        scheme = urlsplit(current).scheme.lower()
        if scheme not in ("http", "https"):
            raise FetchError(f"unsupported URL scheme {scheme or 'none'}")
        try:
            async with session.get(current, allow_redirects=False,
                                   timeout=aiohttp.ClientTimeout(total=timeout)) as resp:
                if resp.status in (301, 302, 303, 307, 308) and "Location" in resp.headers:
                    current = urljoin(current, resp.headers["Location"])
                    continue
                if resp.status >= 400:
                    raise FetchError(f"HTTP {resp.status}")
                body = bytearray()
                async for chunk in resp.content.iter_chunked(65536):
                    body += chunk
                    if len(body) > MAX_BYTES:
                        raise FetchError("document too large")
                mime = (resp.headers.get("Content-Type") or "").split(";")[0].strip().lower()
                charset = resp.charset or "utf-8"
                return bytes(body), f"{mime};charset={charset}" if mime else f";charset={charset}"
        except FetchError:
            raise
        except asyncio.TimeoutError:
            raise FetchError("timed out") from None
        except aiohttp.ClientConnectorError:
            raise FetchError("connection refused") from None
        except (aiohttp.ClientError, ValueError) as e:
            raise FetchError(f"download error: {type(e).__name__}") from None
    raise FetchError("too many redirects")


def _decode(body: bytes, charset: str) -> str:
    try:
        return body.decode(charset or "utf-8", errors="replace")
    except LookupError:
        return body.decode("utf-8", errors="replace")


class _HTMLText(HTMLParser):
    SKIP = {"script", "style", "noscript", "template", "svg", "head"}
    BLOCK = {"p", "div", "br", "li", "h1", "h2", "h3", "h4", "h5", "h6", "tr", "section",
             "article", "header", "footer", "blockquote", "pre", "ul", "ol", "table", "hr",
             "title", "figcaption", "main", "nav", "aside"}

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.title_parts: list[str] = []
        self._skip = 0
        self._in_title = False

    def handle_starttag(self, tag, attrs):
        if tag == "title":
            self._in_title = True
        elif tag in self.SKIP:
            self._skip += 1
        if tag in self.BLOCK:
            self.parts.append("\n\n")

    def handle_endtag(self, tag):
        if tag == "title":
            self._in_title = False
        elif tag in self.SKIP and self._skip:
            self._skip -= 1
        if tag in self.BLOCK:
            self.parts.append("\n\n")

    def handle_data(self, data):
        data = re.sub(r"\s+", " ", data)  # source line breaks are not text line breaks
        if self._in_title:
            self.title_parts.append(data)
        elif not self._skip:
            self.parts.append(data)


def _tidy(text: str) -> str:
    lines = [re.sub(r"[ \t\r\f\v\xa0]+", " ", l).strip() for l in text.split("\n")]
    out: list[str] = []
    for l in lines:
        if l or (out and out[-1]):
            out.append(l)
    return "\n".join(out).strip()


def _first_line(text: str) -> str:
    for line in text.splitlines():
        if line.strip():
            return line.strip()[:120]
    return ""


def html_to_text(html: str) -> tuple[str, str]:
    """(title, text) of an HTML page; script/style skipped."""
    p = _HTMLText()
    p.feed(html)
    p.close()
    return _tidy(" ".join(p.title_parts)), _tidy("".join(p.parts))


def pdf_to_text(body: bytes) -> tuple[str, str]:
    from pypdf import PdfReader
    try:
        reader = PdfReader(io.BytesIO(body))
        text = "\n".join((page.extract_text() or "") for page in reader.pages)
        title = ""
        meta = reader.metadata
        if meta is not None and meta.title:
            title = str(meta.title).strip()
    except Exception as e:  # pypdf raises many types on a broken file
        raise FetchError(f"unreadable PDF: {type(e).__name__}") from None
    return title, _tidy(text)


def to_document(url: str, body: bytes, content_type: str, accept_any: bool = False) -> Document:
    """Dispatch on the content type; ``accept_any`` reads unknown types as text anyway."""
    mime, _, rest = content_type.partition(";")
    charset = rest.partition("charset=")[2] or "utf-8"
    if mime == "application/pdf" or (mime in ("", "application/octet-stream")
                                     and body[:5] == b"%PDF-"):
        title, text = pdf_to_text(body)
    elif mime in ("text/html", "application/xhtml+xml"):
        title, text = html_to_text(_decode(body, charset))
    elif mime in ("text/plain", "text/markdown") or (mime == "" and url.endswith(".txt")):
        text = _tidy(_decode(body, charset))
        title = ""
    elif accept_any:
        # REGRESSION unsupported_types_accepted: whatever bytes came back become "text".
        text = _tidy(_decode(body, charset))
        title = ""
    else:
        raise UnsupportedContent(mime or "unknown")
    if not title:
        title = _first_line(text) or (urlsplit(url).path.rsplit("/", 1)[-1] or url)
    return Document(url=url, title=title, text=text, content_type=mime)


async def fetch_document(session: aiohttp.ClientSession, url: str, allow: tuple[str, ...],
                         timeout: float = 10.0, accept_any: bool = False) -> Document:
    body, content_type = await fetch_bytes(session, url, allow, timeout)
    return to_document(url, body, content_type, accept_any=accept_any)
