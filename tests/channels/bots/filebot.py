"""A stdlib bot (no framework) that downloads what the user sends, as a document summarizer does:
Telegram getFile then /file/bot<token>/<file_path>; WhatsApp GET /<version>/<media-id> then its
URL with the access token. It answers with the first line of the file and its size, or with the
download's failure."""

from __future__ import annotations

import json
import os
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

TG = os.environ.get("TELEGRAM_API_BASE", "").rstrip("/")
TOKEN = os.environ.get("TELEGRAM_BOT_TOKEN", "")
WA = os.environ.get("WHATSAPP_API_BASE", "").rstrip("/")
WA_TOKEN = os.environ.get("WHATSAPP_TOKEN", "")
PNID = os.environ.get("WHATSAPP_PHONE_NUMBER_ID", "")


def _get(url: str, token: str = "") -> bytes:
    req = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"} if token else {})
    with urllib.request.urlopen(req, timeout=5) as resp:
        return resp.read()


def _post(url: str, body: dict, token: str = "") -> None:
    headers = {"Content-Type": "application/json", **({"Authorization": f"Bearer {token}"} if token else {})}
    urllib.request.urlopen(urllib.request.Request(url, json.dumps(body).encode(), headers), timeout=5).read()


def _describe(data: bytes) -> str:
    first = data.decode("utf-8", "replace").strip().splitlines()[0] if data.strip() else ""
    return f"got {len(data)} bytes; first line: {first[:120]}"


def telegram(update: dict) -> None:
    msg = update.get("message") or {}
    doc = msg.get("document") or (msg.get("photo") or [None])[-1]
    if not doc:
        return
    try:
        info = json.loads(_get(f"{TG}/bot{TOKEN}/getFile?file_id={doc['file_id']}"))["result"]
        text = _describe(_get(f"{TG}/file/bot{TOKEN}/{info['file_path']}"))
    except Exception as exc:  # noqa: BLE001 - the user hears about it
        text = f"download failed: {exc}"
    _post(f"{TG}/bot{TOKEN}/sendMessage", {"chat_id": msg["chat"]["id"], "text": text})


def whatsapp(payload: dict) -> None:
    for entry in payload.get("entry", []):
        for change in entry.get("changes", []):
            for msg in change.get("value", {}).get("messages", []):
                media = msg.get(msg.get("type", ""))
                if not isinstance(media, dict) or "id" not in media:
                    continue
                try:
                    info = json.loads(_get(f"{WA}/v21.0/{media['id']}", WA_TOKEN))
                    data = _get(info["url"], WA_TOKEN)
                    text = _describe(data) + f"; size field {info['file_size']}"
                except Exception as exc:  # noqa: BLE001
                    text = f"download failed: {exc}"
                _post(f"{WA}/v21.0/{PNID}/messages", {"messaging_product": "whatsapp", "to": msg["from"],
                                                     "type": "text", "text": {"body": text}}, WA_TOKEN)


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):  # quiet
        pass

    def do_GET(self):  # Meta's verification handshake
        from urllib.parse import parse_qs, urlparse
        q = parse_qs(urlparse(self.path).query)
        ok = q.get("hub.verify_token", [""])[0] == os.environ.get("WHATSAPP_VERIFY_TOKEN")
        body = q.get("hub.challenge", [""])[0].encode() if ok else b"no"
        self.send_response(200 if ok else 403)
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
        self.send_response(200)
        self.end_headers()
        (telegram if self.path.startswith("/telegram") else whatsapp)(body)


if __name__ == "__main__":
    ThreadingHTTPServer(("127.0.0.1", int(os.environ["PORT"])), Handler).serve_forever()
