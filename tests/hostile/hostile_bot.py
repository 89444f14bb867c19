"""A hostile agent (a test double, labelled as such), run as its own process by [target].command.

It answers Telegram webhooks on ``--port`` like a plain echo bot, and misbehaves by
``HOSTILE`` (comma-separated):

- ``leak``: prints its bot token, webhook secret and every pinned secret of its environment
  to stdout (target.log); with ``reply`` too, it also puts the token in its replies;
- ``worker``: double-forks a worker that calls setsid (leaves the process group) and sleeps;
  its pid goes to ``HOSTILE_PIDS`` (a file), one line ``worker <pid>``;
- ``daemon``: like ``worker``, but the grandchild execs a sleeper with an *empty* environment (no
  tag to find it by) right away, its parent gone at once: ``daemon <pid>`` in ``HOSTILE_PIDS``;
- ``stubborn``: ignores SIGTERM (the bot and its worker);
- ``flood``: answers a message with ``FLOOD_N`` replies of ``FLOOD_CHARS`` characters.
- ``bare``: prints the value of every ``MY_*`` variable of its environment alone on a line (no
  name beside it for a shape to catch);
- ``wrongchat``: replies into another chat (the chat id plus one);
- ``dieafter``: exits (code 5) right after it replied to its first message;
- ``orphan``: after its first reply forks a child that keeps the listening socket and answers
  on, then the bot itself exits: ``orphan <pid>`` in ``HOSTILE_PIDS``;
- ``slowhook``: answers the webhook after ``SLOW_S`` seconds (default 8), replying meanwhile;
- ``hook500``: replies, but answers every webhook with HTTP 500;
- ``leakforms``: prints its bot token in every form a careless bot gives it (cut in two lines,
  base64 of ``bot:<token>`` wrapped at 76 columns, hex, a Go-style JSON escape, percent-encoded in
  a URL, in a traceback of its own), and replies with it base64-encoded and cut across two lines;
- ``crash``: prints a traceback-like line and exits 3 before it listens;
- ``chatty``: prints 5 MB of lines at start, then ``LAST LINE BEFORE LISTENING``;
- ``garbage``: writes undecodable bytes and a 300 KB line without a newline to stdout;
- ``hang``: never answers the webhook (the request stays open);
- ``escapes``: its reply carries terminal control sequences (screen clear, window title, an
  OSC 8 link, a cursor query, a C1 CSI);
- ``bomb``: answers a message with one reply of 3 MB through sendMessage, and a document caption
  of 3 MB.

It writes ``bot <pid>`` to ``HOSTILE_PIDS`` once it listens.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import time

import aiohttp
from aiohttp import web

MODES = set(filter(None, os.environ.get("HOSTILE", "").split(",")))
PIDS = os.environ.get("HOSTILE_PIDS", "")


def note(line: str) -> None:
    if PIDS:
        with open(PIDS, "a") as fh:
            fh.write(line + "\n")


def spawn_worker() -> None:
    """fork, setsid, fork: the grandchild is in no group of the bot's and has no parent."""
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            if "stubborn" in MODES:
                signal.signal(signal.SIGTERM, signal.SIG_IGN)
            note(f"worker {os.getpid()}")
            while True:
                time.sleep(1)
        os._exit(0)


def spawn_daemon() -> None:
    """fork, setsid, fork, exec with no environment: a daemon nothing in it ties to the bot."""
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            note(f"daemon {os.getpid()}")
            os.execve(sys.executable, [sys.executable, "-S", "-c", "import time\nwhile True: time.sleep(1)"], {})
        os._exit(0)


def main() -> None:
    port = int(sys.argv[sys.argv.index("--port") + 1])
    env = os.environ
    base = f"{env['TELEGRAM_API_BASE']}/bot{env['TELEGRAM_BOT_TOKEN']}"
    if "crash" in MODES:
        print("Traceback (most recent call last):\nRuntimeError: the bot refuses to start", flush=True)
        sys.exit(3)
    if "chatty" in MODES:  # 5 MB of output at start, then a last line
        for i in range(50_000):
            sys.stdout.write(f"chatter {i:06d} " + "x" * 86 + "\n")
        sys.stdout.write("LAST LINE BEFORE LISTENING\n")
        sys.stdout.flush()
    if "garbage" in MODES:
        sys.stdout.buffer.write(b"\xff\xfe\x00 not utf-8 \xc3\x28\n" + b"g" * 300_000)
        sys.stdout.buffer.flush()
    if "stubborn" in MODES:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if "worker" in MODES:
        spawn_worker()
    if "daemon" in MODES:
        spawn_daemon()
    if "leak" in MODES:
        print(f"starting with token {env['TELEGRAM_BOT_TOKEN']} secret {env['TELEGRAM_WEBHOOK_SECRET']}", flush=True)
        for name, value in sorted(env.items()):
            if name.startswith(("HARNESS_", "OPENAI", "ANTHROPIC", "AWS_", "HOSTILE_", "MY_")):
                print(f"env {name}={value}", flush=True)
    if "leakforms" in MODES:
        import base64
        import traceback
        from urllib.parse import quote

        tok = env["TELEGRAM_BOT_TOKEN"]
        wrapped = base64.encodebytes(f"bot:{tok}".encode() * 3).decode()
        print(f"token head {tok[:20]}\ntoken tail {tok[20:]}", flush=True)
        print(f"auth {wrapped}", flush=True)
        print(f"hex {tok.encode().hex()}", flush=True)
        print(f"url https://api.telegram.org/bot{quote(tok, safe='')}/getMe?x=1", flush=True)
        try:
            raise RuntimeError(f"could not log in with {tok!r}")
        except RuntimeError:
            traceback.print_exc()
            sys.stderr.flush()
    if "bare" in MODES:
        for name, value in sorted(env.items()):
            if name.startswith("MY_"):
                print(f"using {value}", flush=True)
    n = int(env.get("FLOOD_N", "6000"))
    chars = int(env.get("FLOOD_CHARS", "4000"))
    state: dict = {}

    async def reply(chat_id: int, text: str) -> None:
        if "s" not in state:
            state["s"] = aiohttp.ClientSession()
        s = state["s"]
        if "flood" in MODES:
            body = ("x" * chars)
            sem = asyncio.Semaphore(32)

            async def one(i: int) -> None:
                async with sem, s.post(f"{base}/sendMessage", json={"chat_id": chat_id, "text": f"{i} {body}"[:chars]}) as r:
                    await r.read()

            await asyncio.gather(*(one(i) for i in range(n)))
            return
        if "bomb" in MODES:
            async with s.post(f"{base}/sendMessage", json={"chat_id": chat_id, "text": "b" * 3_000_000}) as r:
                await r.read()
        if "leak" in MODES and "reply" in MODES:
            text = f"{text} (my token is {env['TELEGRAM_BOT_TOKEN']})"
            print(f"replying with {env['TELEGRAM_BOT_TOKEN']}", flush=True)
        if "leakforms" in MODES:
            import base64

            tok = env["TELEGRAM_BOT_TOKEN"]
            text = f"{text} {base64.b64encode(('k:' + tok).encode()).decode()} {tok[:25]}\n{tok[25:]}"
        if "escapes" in MODES:  # terminal control sequences in the reply itself
            text = f"{text} \x1b[2J\x1b]0;pwned\x07\x1b]8;;http://evil.example/\x07link\x1b]8;;\x07\x1b[6n\x9b2J end"
        async with s.post(f"{base}/sendMessage", json={"chat_id": chat_id, "text": text}) as r:
            await r.read()

    async def telegram(request: web.Request) -> web.Response:
        if "hang" in MODES:
            await asyncio.sleep(3600)
        update = await request.json()
        msg = update.get("message") or {}
        if "text" in msg:
            chat = msg["chat"]["id"] + (1 if "wrongchat" in MODES else 0)
            task = asyncio.get_running_loop().create_task(reply(chat, f"echo: {msg['text']}"))
            if "dieafter" in MODES or "orphan" in MODES:
                await task
                if "orphan" in MODES and not state.get("forked"):
                    state["forked"] = True
                    if os.fork() != 0:  # the parent goes; the child serves on with the inherited socket
                        os._exit(0)
                    note(f"orphan {os.getpid()}")
                elif "dieafter" in MODES:
                    asyncio.get_running_loop().call_later(0.05, os._exit, 5)
        if "slowhook" in MODES:
            await asyncio.sleep(float(env.get("SLOW_S", "8")))
        return web.Response(status=500 if "hook500" in MODES else 200)

    app = web.Application()
    app.router.add_post("/telegram", telegram)
    note(f"bot {os.getpid()}")
    web.run_app(app, host="127.0.0.1", port=port, print=None, handle_signals="stubborn" not in MODES)


if __name__ == "__main__":
    main()
