"""Delivery faults: what the channel itself does wrong, played by the driver.

- ``burst: [text, text, ...]`` sends several messages back to back in one turn (each its own
  update, ids and timestamps in send order).
- ``fault: {delivery: duplicate}`` posts every update of the turn twice (same ``update_id``
  / same ``wamid``): at-least-once delivery racing with itself.
- ``fault: {delivery: reversed}`` posts a burst's updates last-sent-first: the agent
  sees the later message before the earlier one (ids still tell the true order).

Each posted update is recorded as a driver event like any other delivery.
"""

from __future__ import annotations

import time
from dataclasses import replace

from harness.channels import telegram as tg
from harness.channels import whatsapp as wa
from harness.run.delivery import Delivery
from harness.textgen import render
from harness.types import Case, Event, Turn


def is_scripted(turn: Turn) -> bool:
    """Does this turn need the scripted delivery (a burst or a delivery fault)?"""
    return turn.kind == "burst" or bool((turn.faults or {}).get("delivery"))


async def deliver_scripted(driver, case: Case, turn: Turn, ident, timeout: float, last_bot_message_id: str = ""):
    """Build the turn's updates, then post them as the delivery fault says; returns a
    ``Delivery`` whose status is the worst answer the webhook gave."""
    state = driver.state_for(ident)
    values = driver.values_for(ident)
    if turn.kind == "burst":
        parts = [replace(turn, kind="text", send=t, options={}) for t in turn.options["texts"]]
    else:
        parts = [turn]
    updates = []
    for part in parts:
        text = render(part.send, values) if part.send is not None else None
        if case.channel == "telegram":
            update = driver.telegram_update(part, ident, state, text, last_bot_message_id)
        else:
            update = driver.whatsapp_update(part, ident, state, text, last_bot_message_id)
        driver.note_update(case.channel, update, ident, part)
        state.last_update = update
        updates.append(update)
    mode = (turn.faults or {}).get("delivery")
    if mode == "reversed":
        updates.reverse()
    if mode == "duplicate":
        updates = [u for u in updates for _ in (0, 1)]
    url = driver.endpoints.telegram_webhook if case.channel == "telegram" else driver.endpoints.whatsapp_webhook
    sent_at = time.time()
    worst_status: int | None = 200
    error = ""
    key = f"tg:{ident.chat_id}" if case.channel == "telegram" else f"wa:{ident.wa_id}"
    for update in updates:
        driver.router.record(Event(source="driver", name=f"deliver.{case.channel}", at=time.time(), status=0,
                                   request=update, keys=(key,), meta={"delivery_fault": mode or "burst"}))
        if not url:
            return Delivery(None, f"no {case.channel} webhook configured for the target", sent_at, time.time())
        if case.channel == "telegram":
            result = await tg.deliver_update(driver.session, url, update, driver.config.secrets.webhook_secret,
                                             timeout)
            if result.webhook_reply:
                driver.router.record(tg.webhook_reply_event(result.webhook_reply, time.time()))
        else:
            result = await wa.deliver_payload(driver.session, url, update, driver.config.secrets.app_secret, timeout)
        if result.status is None:
            worst_status, error = None, result.error
        elif worst_status is not None and result.status > worst_status:
            worst_status = result.status
    return Delivery(worst_status, error, sent_at, time.time())
