"""A bot downloads what the user sends, as in production (harness/channels/media.py): Telegram
getFile then /file/bot<token>/<file_path>; WhatsApp GET /<media-id> then its URL with the access
token. A document turn serves the documents folder's file (by ``source:`` or by ``file_name``),
anything else a labelled placeholder of the declared size. Before, getFile named a path the
emulator answered 404 and a media id had no URL: every downloading bot failed its document cases.
Each case has its wrong twin (another file's first line must fail)."""

from __future__ import annotations

import sys
from pathlib import Path

import aiohttp
import pytest

from harness.cases import load_cases
from harness.channels import media
from harness.channels.telegram import BotApiEmulator
from harness.channels.whatsapp_emulator import GraphApiEmulator
from harness.config import load_config
from harness.run.runner import RunOptions, run_suite
from harness.sandbox.server import listen
from tests.channels._bot_config import telegram_bot_config

ROOT = Path(__file__).resolve().parents[2]
BOT = Path(__file__).resolve().parent / "bots" / "filebot.py"
TOKEN = "123456:ABC-def_ghi"

WHATSAPP = f"""
[target]
name = "filebot-wa"
command = ["{sys.executable}", "{BOT}"]
cwd = "{ROOT}"
port = 0
whatsapp_webhook = "http://127.0.0.1:{{port}}/whatsapp"
[target.env]
PORT = "{{port}}"
WHATSAPP_API_BASE = "{{whatsapp_api}}"
WHATSAPP_PHONE_NUMBER_ID = "{{phone_number_id}}"
WHATSAPP_TOKEN = "{{whatsapp_token}}"
WHATSAPP_VERIFY_TOKEN = "{{verify_token}}"
[sandbox]
settle_s = 0.3
reply_timeout_s = 5
docs_dir = "docs"
"""

CASES = """
layer: robustness
defaults: {{variants: none, channel: {channel}}}
cases:
  - id: by-source
    turns:
      - document: {{file_name: report.txt, mime_type: text/plain, source: notes.txt}}
        expect: {{reply: {{regex: "first line: {notes}"}}}}
  - id: by-file-name
    turns:
      - document: {{file_name: other.txt, mime_type: text/plain}}
        expect: {{reply: {{regex: "got 30 bytes; first line: {other}"}}}}
  - id: wrong-twin
    turns:
      - document: {{file_name: other.txt, mime_type: text/plain}}
        expect: {{reply: {{regex: "first line: {notes}"}}}}
  - id: placeholder
    turns:
      - document: {{file_name: not-in-the-folder.pdf, mime_type: application/pdf}}
        expect: {{reply: {{regex: "got 12345 bytes; first line: harness placeholder file"}}}}
"""


def _project(tmp_path: Path, channel: str) -> Path:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "notes.txt").write_text("Findings: the bees came back.\nMore.\n")
    (docs / "other.txt").write_text("Acknowledgements: thanks all.\n")
    (tmp_path / "fx" / "robustness").mkdir(parents=True)
    (tmp_path / "fx" / "robustness" / "files.yaml").write_text(
        CASES.format(channel=channel, notes="Findings: the bees came back", other="Acknowledgements: thanks all"))
    if channel == "telegram":
        config = telegram_bot_config("filebot", [sys.executable, BOT], ROOT, reply_timeout_s=5) + 'docs_dir = "docs"\n'
    else:
        config = WHATSAPP
    (tmp_path / "harness.toml").write_text(config)
    return tmp_path / "harness.toml"


@pytest.mark.parametrize("channel", ["telegram", "whatsapp"])
async def test_a_bot_downloads_the_file_the_user_sent(tmp_path, channel):
    cfg = _project(tmp_path, channel)
    report = await run_suite(load_config(cfg, environ={}), load_cases(tmp_path / "fx"),
                             RunOptions(out_dir=tmp_path / "out"))
    by_id = {c.id: c for c in report.cases}
    why = {k: [(e.check, e.reason) for e in c.evidence if e.passed is not True] for k, c in by_id.items()}
    assert by_id["by-source"].status == "pass", why
    assert by_id["by-file-name"].status == "pass", why
    assert by_id["placeholder"].status == "pass", why
    assert by_id["wrong-twin"].status == "fail", why  # another file's first line is no pass


async def test_getfile_and_download_on_the_emulator():
    em = BotApiEmulator(TOKEN, lambda e: None)
    em.note_file("FILE1", media.InboundFile("a.txt", "text/plain", b"hello\n", "placeholder", ("tg:5",)))
    srv = await listen(em.app(), "telegram")
    try:
        async with aiohttp.ClientSession() as s:
            async with s.get(f"{srv.base_url}/bot{TOKEN}/getFile", params={"file_id": "FILE1"}) as r:
                info = (await r.json())["result"]
            assert info["file_size"] == 6 and info["file_path"].endswith(".txt")
            async with s.get(f"{srv.base_url}/file/bot{TOKEN}/{info['file_path']}") as r:
                assert r.status == 200 and await r.read() == b"hello\n"
            for bad in (f"/file/bot{TOKEN}/documents/nope.txt", f"/file/botWRONG/{info['file_path']}"):
                async with s.get(srv.base_url + bad) as r:
                    assert r.status == 404 and (await r.json())["description"] == "Not Found"
    finally:
        await srv.stop()


async def test_media_url_and_download_need_the_access_token():
    em = GraphApiEmulator("1234", "TOKEN", lambda e: None)
    em.note_file("999", media.InboundFile("a.pdf", "application/pdf", b"%PDF-1.4 x", "placeholder", ("wa:1",)))
    srv = await listen(em.app(), "whatsapp")
    auth = {"Authorization": "Bearer TOKEN"}
    try:
        async with aiohttp.ClientSession() as s:
            async with s.get(f"{srv.base_url}/v21.0/999", headers=auth) as r:
                info = await r.json()
            assert info["file_size"] == "10" and info["mime_type"] == "application/pdf" and info["id"] == "999"
            async with s.get(info["url"]) as r:
                assert r.status == 401  # Meta wants the token on the download too
            async with s.get(info["url"], headers=auth) as r:
                assert r.status == 200 and await r.read() == b"%PDF-1.4 x"
            async with s.get(info["url"].replace("mid=999", "mid=998"), headers=auth) as r:
                assert r.status == 404
            async with s.get(f"{srv.base_url}/v21.0/1234", headers=auth) as r:  # the phone number still answers
                assert (await r.json())["id"] == "1234"
    finally:
        await srv.stop()


def test_a_document_source_outside_the_folder_is_refused(tmp_path):
    cfg = _project(tmp_path, "telegram")
    path = tmp_path / "fx" / "robustness" / "files.yaml"
    path.write_text(path.read_text().replace("source: notes.txt", "source: ../harness.toml"))
    from harness.cli import main
    assert main(["check", "--config", str(cfg), "--fixtures", str(tmp_path / "fx")]) == 2


def test_a_placeholder_says_what_it_is_and_has_the_declared_size():
    f = media.inbound_file("x.bin", "application/octet-stream", 500)
    assert f.origin == "placeholder" and len(f.data) == 500 and f.data.startswith(b"harness placeholder file")
    assert media.inbound_file("x.bin", "application/octet-stream", 10**9).data.__len__() == media.PLACEHOLDER_MAX


async def test_a_document_over_telegrams_20_mb_download_limit_is_too_big(tmp_path):
    """getFile serves bots at most 20 MB (Bot API, getFile): a bigger document is refused with the
    server's text, its twin at 20 MB downloads; one over 100 MB is never read into memory."""
    docs = tmp_path / "docs"
    docs.mkdir()
    for name, size in (("big.bin", media.TELEGRAM_DOWNLOAD_MAX + 1), ("ok.bin", media.TELEGRAM_DOWNLOAD_MAX),
                       ("huge.bin", media.READ_MAX + 1)):
        with open(docs / name, "wb") as f:  # sparse: no disk used
            f.truncate(size)
    huge = media.inbound_file("huge.bin", "application/octet-stream", 0, docs_dir=docs)
    assert huge.data == b"" and huge.byte_size == media.READ_MAX + 1 and not huge.served
    em = BotApiEmulator(TOKEN, lambda e: None)
    for fid, name in (("BIG", "big.bin"), ("OK", "ok.bin")):
        em.note_file(fid, media.inbound_file(name, "application/octet-stream", 0, docs_dir=docs))
    srv = await listen(em.app(), "telegram")
    try:
        async with aiohttp.ClientSession() as s:
            async with s.get(f"{srv.base_url}/bot{TOKEN}/getFile", params={"file_id": "BIG"}) as r:
                assert r.status == 400 and (await r.json())["description"] == "Bad Request: file is too big"
            async with s.get(f"{srv.base_url}/bot{TOKEN}/getFile", params={"file_id": "OK"}) as r:
                info = (await r.json())["result"]
            assert info["file_size"] == media.TELEGRAM_DOWNLOAD_MAX
            async with s.get(f"{srv.base_url}/file/bot{TOKEN}/{info['file_path']}") as r:
                assert r.status == 200 and len(await r.read()) == media.TELEGRAM_DOWNLOAD_MAX
    finally:
        await srv.stop()
