"""The files a simulated user sends, on the driver's side: their bytes registered with the emulator
that serves them (channels/media.py), and the opening of a document given to the router as the
case's text, so a summarizer's LLM call (which carries the document, not a message) is its case's."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from harness.channels import media
from harness.run.delivery import Identity
from harness.types import Turn


class InboundFiles:
    """Per run: the documents folder, the router, the two emulators, each document's opening."""

    def __init__(self, docs_dir: Path | None, router: Any, telegram_emulator: Any, whatsapp_emulator: Any):
        self.docs_dir = docs_dir
        self.router = router
        self.telegram_emulator = telegram_emulator
        self.whatsapp_emulator = whatsapp_emulator
        self._openings: dict[str, str] = {}  # a document's opening, read once per run (_opening)

    def note(self, channel: str, update: dict, ident: Identity, turn: Turn) -> None:
        """Give the emulator the bytes of the files this update sends (harness/channels/media.py),
        so a bot downloads them as in production (getFile and /file/bot...; GET /<media-id>)."""
        source = turn.options.get("source") if turn.kind == "document" else None
        source = str(source) if source else None
        files: list[media.InboundFile] = []
        if channel == "telegram" and self.telegram_emulator is not None:
            for file_id, file in media.telegram_files(update, docs_dir=self.docs_dir, source=source,
                                                      keys=(f"tg:{ident.chat_id}",)):
                self.telegram_emulator.note_file(file_id, file)
                files.append(file)
        elif channel == "whatsapp" and self.whatsapp_emulator is not None:
            for media_id, file in media.whatsapp_files(update, docs_dir=self.docs_dir, source=source,
                                                       keys=(f"wa:{ident.wa_id}",)):
                self.whatsapp_emulator.note_file(media_id, file)
                files.append(file)
        # a summarizer's LLM call carries the document, not a message: its opening is the case's text
        # (two cases sending one document never run side by side: turns.case_texts locks its name)
        self.router.sent_by(f"tg:{ident.chat_id}" if channel == "telegram" else f"wa:{ident.wa_id}",
                            [t for t in (self._opening(f) for f in files) if t])

    def _opening(self, file: media.InboundFile) -> str:
        """The opening a bot's prompt holds of a document it was sent: a PDF's or an HTML page's
        text as a reader extracts it (pypdf, the harness's own HTML reader), else the file's own."""
        name = file.origin.removeprefix("documents/") if file.origin.startswith("documents/") else ""
        suffix = Path(name).suffix.lower()
        if not name or suffix not in (".pdf", ".html", ".htm", ".xhtml") or self.docs_dir is None:
            return file.opening()
        if name not in self._openings:
            try:  # a PDF's pages only: a bot's extractor does not add the metadata title
                from harness.models.claims import document_text

                text = document_text(self.docs_dir / name, title=False, pages=2)
            except Exception:  # noqa: BLE001 - an unreadable document attributes nothing, as before
                text = ""
            self._openings[name] = " ".join(text.split())[:80]
        return self._openings[name]
