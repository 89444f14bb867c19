"""Telegram's flood limits, opt-in: for every chat (``BotApiEmulator.flood``) or for one case's
chats during a turn (``fault: {telegram: flood}``). 429 with ``parameters.retry_after``, which
python-telegram-bot raises as its own ``RetryAfter``."""

from __future__ import annotations

import aiohttp
import pytest

from harness.channels.telegram import BotApiEmulator
from harness.channels.telegram_limits import FloodLimits
from harness.sandbox.faults import FaultBook, validate
from harness.sandbox.server import listen

TOKEN = "123456:ABC-flood"


class Clock:
    def __init__(self) -> None:
        self.now = 1_750_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
async def api():
    clock = Clock()
    emu = BotApiEmulator(TOKEN, lambda e: None, clock=clock)
    srv = await listen(emu.app(), "telegram-flood")
    async with aiohttp.ClientSession() as session:
        async def send(chat, text="x"):
            async with session.post(f"{srv.base_url}/bot{TOKEN}/sendMessage",
                                    json={"chat_id": chat, "text": text}) as resp:
                return resp.status, await resp.json()
        yield emu, clock, send, srv.base_url
    await srv.stop()


async def test_off_by_default(api):
    _, _, send, _ = api
    assert {(await send(5))[0] for _ in range(10)} == {200}


async def test_per_chat_burst_then_429_with_retry_after(api):
    emu, clock, send, _ = api
    emu.flood = FloodLimits()
    assert [(await send(5))[0] for _ in range(3)] == [200, 200, 200]
    status, body = await send(5)
    assert (status, body) == (429, {"ok": False, "error_code": 429, "description": "Too Many Requests: retry after 1",
                                    "parameters": {"retry_after": 1}})
    assert (await send(6))[0] == 200  # another chat has its own budget
    clock.now += 1.0
    assert (await send(5))[0] == 200


async def test_group_and_global_limits(api):
    emu, clock, send, _ = api
    emu.flood = FloodLimits()
    assert {(await send(-1001))[0] for _ in range(20)} == {200}
    status, body = await send(-1001)
    assert status == 429 and body["parameters"]["retry_after"] == 3  # 20 a minute: one every 3 s
    emu.flood = FloodLimits(burst=100)
    statuses = [(await send(1000 + i))[0] for i in range(31)]
    assert statuses[:30] == [200] * 30 and statuses[30] == 429


async def test_case_fault_floods_only_that_case(api):
    emu, _, send, _ = api
    assert validate({"telegram": "flood"}) is None
    assert "telegram only" in validate({"whatsapp": "flood"})
    book = FaultBook()
    emu.case_faults = book
    armed = book.arm(("tg:5",), {"telegram": "flood"})
    assert [(await send(5))[0] for _ in range(4)] == [200, 200, 200, 429]
    assert {(await send(6))[0] for _ in range(5)} == {200}
    book.disarm(armed)
    assert (await send(5))[0] == 200


async def test_python_telegram_bot_raises_retry_after(api):
    telegram = pytest.importorskip("telegram")
    emu, _, _, base = api
    emu.flood = FloodLimits(burst=1)
    bot = telegram.Bot(TOKEN, base_url=f"{base}/bot")
    async with bot:
        await bot.send_message(5, "one")
        with pytest.raises(telegram.error.RetryAfter) as info:
            await bot.send_message(5, "two")
    assert info.value.retry_after in (1, __import__("datetime").timedelta(seconds=1))


async def test_aiogram_raises_telegram_retry_after(api):
    pytest.importorskip("aiogram")
    from aiogram import Bot
    from aiogram.client.session.aiohttp import AiohttpSession
    from aiogram.client.telegram import TelegramAPIServer
    from aiogram.exceptions import TelegramRetryAfter

    emu, _, _, base = api
    emu.flood = FloodLimits(burst=1)
    bot = Bot(TOKEN, session=AiohttpSession(api=TelegramAPIServer.from_base(base)))
    try:
        await bot.send_message(5, "one")
        with pytest.raises(TelegramRetryAfter) as info:
            await bot.send_message(5, "two")
        assert info.value.retry_after == 1
    finally:
        await bot.session.close()
