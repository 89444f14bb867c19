"""``callbacks_answered``: every button press (Telegram callback query) got its answerCallbackQuery.

Telegram shows a spinner on the pressed button until the bot calls ``answerCallbackQuery``
(core.telegram.org/bots/api#answercallbackquery: "the answer will be displayed to the user as
a notification ... Otherwise, the client will show a progress bar"); a query left unanswered
is reported here with its id, and an answer given too late for Telegram (the emulator
answers "query is too old") counts as not answered.
"""

from __future__ import annotations

from typing import Any

from harness.checks.base import CheckDef, turn_never_ran, turn_obs, verdict
from harness.checks.params import Flag
from harness.types import Case, Evidence, Observation

EVAL = "callbacks@1"


def _query_ids(events) -> list[str]:
    ids = []
    for e in events:
        if e.source == "driver" and isinstance(e.request, dict):
            query = e.request.get("callback_query")
            if isinstance(query, dict) and query.get("id"):
                ids.append(str(query["id"]))
    return list(dict.fromkeys(ids))


def callbacks_answered(case: Case, obs: Observation, turn: int, params: Any) -> Evidence:
    name = "callbacks_answered"
    t = turn_obs(obs, turn)
    if t is None:
        return turn_never_ran(name, turn, obs, EVAL, "every callback query answered")
    queries = _query_ids(t.events)
    if not queries:
        return verdict(name, turn, False, expected="every callback query answered", observed="(no button press)",
                       reason=f"turn {turn} pressed no Telegram button: use a callback turn", evaluator=EVAL)
    answered = {str(e.request.get("callback_query_id")) for e in t.events
                if e.name == "telegram.answerCallbackQuery" and 200 <= e.status < 300}
    missing = [q for q in queries if q not in answered]
    return verdict(name, turn, not missing, expected="every callback query answered",
                   observed=f"{len(queries) - len(missing)} of {len(queries)} answered",
                   reason=("answered" if not missing else
                           f"callback query {', '.join(missing)} never answered with answerCallbackQuery: "
                           "the user's button keeps spinning"), evaluator=EVAL)


CHECKS = (CheckDef("callbacks_answered", callbacks_answered, Flag, EVAL),)
