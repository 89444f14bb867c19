"""Per-chat sessions and processed update ids, in SQLite.

Calls are synchronous and short; docbot runs them on its event loop thread.
"""

from __future__ import annotations

import json
import sqlite3
import time
from dataclasses import asdict, dataclass, fields

SCHEMA = """
CREATE TABLE IF NOT EXISTS sessions (
    chat_id TEXT PRIMARY KEY,
    channel TEXT,
    doc_url TEXT,
    doc_title TEXT,
    doc_text TEXT,
    platform TEXT,
    task TEXT,
    pending TEXT,
    turns INTEGER NOT NULL DEFAULT 0,
    last_summary TEXT,
    updated_at REAL,
    candidates TEXT
);
CREATE TABLE IF NOT EXISTS processed_updates (
    channel TEXT NOT NULL,
    update_key TEXT NOT NULL,
    chat_id TEXT,
    received_at REAL,
    PRIMARY KEY (channel, update_key)
);
"""


@dataclass
class Session:
    chat_id: str
    channel: str | None = None
    doc_url: str | None = None
    doc_title: str | None = None
    doc_text: str | None = None
    platform: str | None = None
    task: str | None = None       # None | "summarize"
    pending: str | None = None    # None | "platform"
    turns: int = 0
    last_summary: str | None = None
    candidates: str | None = None  # JSON list of URLs while pending == "document" (followups.py)

    def state(self) -> dict:
        """The JSON of GET /state/{chat_id} (contract)."""
        return {
            "chat_id": self.chat_id,
            "channel": self.channel,
            "document": ({"url": self.doc_url, "title": self.doc_title}
                         if self.doc_url else None),
            "platform": self.platform,
            "task": self.task,
            "pending": self.pending,
            "turns": self.turns,
            "last_summary": self.last_summary,
            "candidates": json.loads(self.candidates) if self.candidates else None,
        }


_COLUMNS = [f.name for f in fields(Session)]


class Store:
    def __init__(self, path: str):
        self.db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.executescript(SCHEMA)
        cols = {r[1] for r in self.db.execute("PRAGMA table_info(sessions)")}
        if "candidates" not in cols:  # a store written before follow-ups existed
            self.db.execute("ALTER TABLE sessions ADD COLUMN candidates TEXT")

    def close(self) -> None:
        self.db.close()

    def get(self, chat_id: str) -> Session:
        row = self.db.execute(f"SELECT {', '.join(_COLUMNS)} FROM sessions WHERE chat_id = ?",
                              (str(chat_id),)).fetchone()
        if row is None:
            return Session(chat_id=str(chat_id))
        return Session(**dict(zip(_COLUMNS, row)))

    def save(self, s: Session) -> None:
        d = asdict(s)
        d["updated_at"] = time.time()
        cols = list(d)
        self.db.execute(
            f"INSERT OR REPLACE INTO sessions ({', '.join(cols)}) "
            f"VALUES ({', '.join('?' for _ in cols)})", [d[c] for c in cols])

    def update(self, chat_id: str, **changes) -> Session:
        s = self.get(chat_id)
        for k, v in changes.items():
            setattr(s, k, v)
        self.save(s)
        return s

    def first_time(self, channel: str, update_key: str, chat_id: str) -> bool:
        """Record an update id; False if it was seen before (a redelivery)."""
        cur = self.db.execute(
            "INSERT OR IGNORE INTO processed_updates (channel, update_key, chat_id, received_at) "
            "VALUES (?, ?, ?, ?)", (channel, str(update_key), str(chat_id), time.time()))
        return cur.rowcount == 1
