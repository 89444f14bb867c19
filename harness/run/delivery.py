"""The ids and records of one delivery: who the user is, what the driver remembers, what happened.

Shared by the driver and its scripted deliveries (``driver_faults``), so neither reaches
into the other.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

TELEGRAM_CHAT_BASE = 700_000_000
WHATSAPP_BASE = 4_470_000_000_000


@dataclass(frozen=True)
class Identity:
    """The ids one case attempt runs under: unique, so cases can run concurrently."""

    chat_id: int
    wa_id: str
    doc_token: str

    def keys(self) -> tuple[str, ...]:
        return (f"tg:{self.chat_id}", f"wa:{self.wa_id}", f"user:{self.chat_id}", f"user:{self.wa_id}",
                f"tok:{self.doc_token}")

    def chat_for(self, channel: str) -> str:
        return str(self.chat_id) if channel == "telegram" else self.wa_id


def make_identity(n: int, token: str) -> Identity:
    return Identity(chat_id=TELEGRAM_CHAT_BASE + n, wa_id=str(WHATSAPP_BASE + n), doc_token=token)


@dataclass
class Delivery:
    """What happened when one turn's update was posted."""

    status: int | None
    error: str
    sent_at: float
    finished_at: float


@dataclass
class CaseState:
    """What the driver remembers of one attempt's chat between turns."""

    last_update: dict | None = None
    last_message_id: int | None = None
    last_bot_message_id: str = ""
    extra: dict[str, Any] = field(default_factory=dict)
