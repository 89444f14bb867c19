"""Finding the link in a message and judging it (contract steps 7-9)."""

from __future__ import annotations

import ipaddress
import posixpath
import re
from urllib.parse import urlsplit

_TLDS = ("com|org|net|edu|gov|mil|int|io|ai|co|dev|app|info|biz|me|tv|us|uk|de|fr|es|it|pt|nl"
         "|be|ch|at|se|no|dk|fi|pl|cz|ru|ua|cn|jp|kr|in|br|mx|ar|ca|au|nz|za|eu|xyz|site|online"
         "|tech|news|blog|page|science|research|academy|ly|gl|gg|to|cc|ws")
_CHARS = r"[^\s<>\"'`]"
LINK_RE = re.compile(
    rf"(?<![\w@.])(?:"
    rf"[a-z][a-z0-9+.\-]*:/{{1,3}}{_CHARS}+"                       # scheme:// (or a typo of it)
    rf"|www\.{_CHARS}+"                                              # www.example.org
    rf"|localhost(?::\d+)?(?:/{_CHARS}*)?"                           # localhost:8000/x
    rf"|\d{{1,3}}(?:\.\d{{1,3}}){{3}}(?::\d+)?(?:/{_CHARS}*)?"       # 10.0.0.1/x
    rf"|(?:[a-z0-9](?:[a-z0-9\-]*[a-z0-9])?\.)+(?:{_TLDS})(?![\w\-])(?::\d+)?(?:/{_CHARS}*)?"
    rf")", re.I)
_TRAILING = ".,;:!?)]}>'\"*"

#: Link extensions that are certainly not a PDF/HTML/plain-text document.
NON_DOCUMENT_EXTENSIONS = frozenset("""
.jpg .jpeg .png .gif .bmp .webp .svg .tif .tiff .heic .ico .mp4 .mov .avi .mkv .webm .wmv .flv
.m4v .3gp .mp3 .wav .ogg .oga .m4a .flac .aac .opus .zip .rar .7z .tar .gz .tgz .bz2 .xz .exe
.msi .dmg .apk .bin .iso .dll .so .deb .rpm .doc .docx .xls .xlsx .ppt .pptx .odt .ods .odp
""".split())

_OTHER_SCHEMES = frozenset("""ftp ftps sftp file ws wss data javascript mailto ssh git smb gopher
                           tel irc ldap nntp telnet rtsp s3 gs magnet""".split())

OK, INVALID, SCHEME = "ok", "invalid", "scheme"


def find_link(text: str) -> str | None:
    """The first link-like thing in ``text`` (as written, minus trailing punctuation)."""
    m = LINK_RE.search(text or "")
    if not m:
        return None
    link = m.group(0)
    while link and link[-1] in _TRAILING:
        link = link[:-1]
    return link or None


def _edit_distance(a: str, b: str) -> int:
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        prev = cur
    return prev[-1]


def _looks_like_http(scheme: str) -> bool:
    if scheme in _OTHER_SCHEMES:
        return False
    return (min(_edit_distance(scheme, "http"), _edit_distance(scheme, "https")) <= 2
            or (scheme.startswith("h") and "tp" in scheme))


def _valid_host(host: str | None) -> bool:
    if not host:
        return False
    if host == "localhost":
        return True
    try:
        ipaddress.ip_address(host)
        return True
    except ValueError:
        pass
    labels = host.split(".")
    return len(labels) >= 2 and all(re.fullmatch(r"[a-z0-9](?:[a-z0-9\-]*[a-z0-9])?", l)
                                    for l in labels) and not labels[-1].isdigit()


def classify(link: str) -> str:
    """OK (a full http(s) URL), INVALID (INVALID_URL) or SCHEME (UNSUPPORTED_SCHEME)."""
    m = re.match(r"([a-z][a-z0-9+.\-]*):(/*)", link, re.I)
    if not m or (m.group(2) == "" and not re.match(r"[a-z][a-z0-9+.\-]*:/", link, re.I)):
        return INVALID  # bare domain, www.x.org, localhost:8000/...
    scheme, slashes = m.group(1).lower(), m.group(2)
    if scheme in ("http", "https"):
        if slashes != "//":
            return INVALID
        try:
            parts = urlsplit(link)
            parts.port  # noqa: B018 - raises on a bad port
        except ValueError:
            return INVALID
        return OK if _valid_host(parts.hostname) else INVALID
    return INVALID if _looks_like_http(scheme) else SCHEME


def coerce(link: str) -> str:
    """What a validation-free docbot would fetch: bare domains get https:// in front."""
    if re.match(r"[a-z][a-z0-9+.\-]*:/", link, re.I):
        return link
    return "https://" + link


def extension(url: str) -> str:
    """The lower-cased extension of the URL's path ('' if none)."""
    try:
        path = urlsplit(url).path
    except ValueError:
        path = url
    return posixpath.splitext(path)[1].lower()


def non_document_extension(url: str) -> str | None:
    ext = extension(url)
    return ext if ext in NON_DOCUMENT_EXTENSIONS else None
