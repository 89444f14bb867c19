"""The bytes behind the files a simulated user sends, so a bot can download them as in production.

Telegram: the update carries a ``file_id``; the bot calls ``getFile`` and downloads
``/file/bot<token>/<file_path>``. WhatsApp: the webhook carries a media ``id``; the bot asks
``GET /<version>/<media-id>`` for a URL and downloads it with its access token. The emulators
serve both from an ``InboundFile`` the driver registers when it builds the update.

A document turn's content is the documents folder's file named by its ``source:`` (or, without
one, by its ``file_name`` when the folder has such a file). Any other file (a photo, a voice
note, a document the folder does not hold) gets a placeholder of the size the update declares,
labelled as such in its first bytes: a bot that reads it reads a test file, never real content.
"""

from __future__ import annotations

import base64
import hashlib
from dataclasses import dataclass
from pathlib import Path

#: A 1x1 white JPEG (what a decoder of a placeholder photo opens).
_JPEG_1PX = base64.b64decode(
    "/9j/4AAQSkZJRgABAQEASABIAAD/2wBDAP//////////////////////////////////////////////////////////////"
    "////////////////////////////wAALCAABAAEBAREA/8QAFAABAAAAAAAAAAAAAAAAAAAAA//EABQQAQAAAAAAAAAAAAAAAAAA"
    "AAD/2gAIAQEAAD8AN//Z")

#: The most a placeholder is (a declared size past it is served cut to this).
PLACEHOLDER_MAX = 1024 * 1024
#: The most of a documents-folder file read into memory (WhatsApp's document limit, 100 MB);
#: a bigger one is described with its size, never served.
READ_MAX = 100 * 1024 * 1024
#: What a bot may download through getFile (core.telegram.org/bots/api#getfile: 20 MB); past it
#: the Bot API answers 400 "file is too big".
TELEGRAM_DOWNLOAD_MAX = 20 * 1024 * 1024


@dataclass(frozen=True)
class InboundFile:
    """A file the simulated user sent: its name, type and bytes, and where they came from."""

    name: str
    mime_type: str
    data: bytes
    origin: str
    """``documents/<name>`` (a file of the documents folder) or ``placeholder`` (test bytes)."""
    keys: tuple[str, ...] = ()
    """The sender's correlation keys (``tg:<chat>``, ``wa:<wa_id>``): a download is its case's call."""
    size: int = -1
    """The file's size when its bytes were not read (over READ_MAX); -1: ``len(data)``."""

    @property
    def byte_size(self) -> int:
        return self.size if self.size >= 0 else len(self.data)

    @property
    def served(self) -> bool:
        """Are the bytes here (not a file too big to read)?"""
        return self.size < 0

    def opening(self, chars: int = 120) -> str:
        """The first ``chars`` characters of a text document from the documents folder (spacing
        collapsed), which a bot that sends the document to its model puts in the prompt; '' for
        a placeholder or a file that is not UTF-8 text."""
        if not self.origin.startswith("documents/") or b"\0" in self.data[:4096]:
            return ""
        try:
            text = self.data[:16 * chars].decode("utf-8")
        except UnicodeDecodeError:
            return ""
        return " ".join(text.split())[:chars]

    @property
    def sha256_hex(self) -> str:
        return hashlib.sha256(self.data).hexdigest()

    @property
    def sha256_b64(self) -> str:
        return base64.b64encode(hashlib.sha256(self.data).digest()).decode()


def document_path(docs_dir: Path | None, name: str | None) -> Path | None:
    """The documents folder's file of that name (never a path out of the folder), or None."""
    if docs_dir is None or not name:
        return None
    try:
        root = docs_dir.resolve()
        path = (root / name).resolve()
        return path if path.is_file() and root in path.parents else None
    except (OSError, RuntimeError, ValueError):
        return None


def placeholder(name: str, mime_type: str, size: int) -> bytes:
    """Test bytes of ``size`` (at most PLACEHOLDER_MAX) saying what they are: a JPEG for images."""
    size = max(0, min(int(size), PLACEHOLDER_MAX))
    if mime_type.startswith("image/jpeg"):
        head = _JPEG_1PX
    else:
        head = (f"harness placeholder file {name!r} ({mime_type}): the case gave no content for it "
                "(document: {source: <file of the documents folder>} gives one)\n").encode("utf-8", "replace")
    if len(head) >= size:
        return head[:size] if not mime_type.startswith("image/jpeg") else head
    return head + b"\n" * (size - len(head))


def inbound_file(name: str, mime_type: str, declared_size: int, *, docs_dir: Path | None = None,
                 source: str | None = None, keys: tuple[str, ...] = ()) -> InboundFile:
    """The file a turn sends: the documents folder's ``source`` (or ``name``), else a placeholder."""
    for candidate in (source, None if source else name):
        path = document_path(docs_dir, candidate)
        if path is not None:
            try:
                size = path.stat().st_size
                if size > READ_MAX:  # described with its size, never read whole into memory
                    return InboundFile(name, mime_type, b"", f"documents/{candidate}", keys, size=size)
                return InboundFile(name, mime_type, path.read_bytes(), f"documents/{candidate}", keys)
            except OSError:
                break
    return InboundFile(name, mime_type, placeholder(name, mime_type, declared_size), "placeholder", keys)


_TELEGRAM_KINDS = {"document": "application/octet-stream", "sticker": "image/webp", "voice": "audio/ogg",
                   "audio": "audio/mpeg", "video": "video/mp4", "animation": "video/mp4"}


def telegram_files(update: dict, *, docs_dir: Path | None, source: str | None,
                   keys: tuple[str, ...]) -> list[tuple[str, InboundFile]]:
    """The (file_id, file) pairs of a Telegram update the user sent; a document's ``file_size`` is
    set to its content's (the documents folder's file, when the case names one)."""
    msg = next((update[k] for k in ("message", "edited_message", "channel_post") if isinstance(update.get(k), dict)),
               None)
    out: list[tuple[str, InboundFile]] = []
    if msg is None:
        return out
    for size in msg.get("photo") or []:
        if isinstance(size, dict) and size.get("file_id"):
            out.append((size["file_id"], InboundFile("photo.jpg", "image/jpeg",
                                                     placeholder("photo.jpg", "image/jpeg", size.get("file_size") or 0),
                                                     "placeholder", keys)))
    for kind, mime in _TELEGRAM_KINDS.items():
        item = msg.get(kind)
        if not isinstance(item, dict) or not item.get("file_id"):
            continue
        name = str(item.get("file_name") or f"{kind}.bin")
        file = inbound_file(name, str(item.get("mime_type") or mime), int(item.get("file_size") or 0),
                            docs_dir=docs_dir if kind == "document" else None,
                            source=source if kind == "document" else None, keys=keys)
        if "file_size" in item:
            item["file_size"] = file.byte_size
        out.append((item["file_id"], file))
    return out


def whatsapp_files(update: dict, *, docs_dir: Path | None, source: str | None,
                   keys: tuple[str, ...], declared: int = 12_345) -> list[tuple[str, InboundFile]]:
    """The (media id, file) pairs of a WhatsApp webhook payload the user sent; each media's
    ``sha256`` is set to its bytes' (base64, as Meta's webhooks carry it)."""
    out: list[tuple[str, InboundFile]] = []
    for entry in update.get("entry") or []:
        for change in (entry.get("changes") or []) if isinstance(entry, dict) else []:
            value = change.get("value") if isinstance(change, dict) else None
            for msg in (value.get("messages") or []) if isinstance(value, dict) else []:
                kind = msg.get("type") if isinstance(msg, dict) else None
                media = msg.get(kind) if kind else None
                if not isinstance(media, dict) or not media.get("id"):
                    continue
                mime = str(media.get("mime_type") or "application/octet-stream")
                name = str(media.get("filename") or f"{kind}.{mime.split('/')[-1].split(';')[0] or 'bin'}")
                file = inbound_file(name, mime, declared, docs_dir=docs_dir if kind == "document" else None,
                                    source=source if kind == "document" else None, keys=keys)
                media["sha256"] = file.sha256_b64
                out.append((str(media["id"]), file))
    return out
