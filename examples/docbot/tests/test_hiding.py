"""The issue-11 seeded regressions (faults.py helpers and their switch points in pipeline.py,
followups.py and llm.py): each one changes what the contract says, the clean agent does not."""

from __future__ import annotations

import asyncio

from docbot import faults, keys, regressions

from test_docbot import _tg, _tg_update, stack  # noqa: F401  (stack is a fixture)

NEW = ("stale_followup_answer", "summary_from_previous_document", "slow_followup_turns",
       "replies_cross_chats", "post_to_user", "post_source_stale_link", "post_dedup_by_platform",
       "followup_reads_summary_only", "document_choices_reordered", "non_ascii_stripped", "numbers_rounded", "dates_shifted")


def test_registry_has_the_new_regressions():
    assert len(regressions.REGISTRY) == 41 and len(regressions.NAMES) == 41  # + 8 of issue 22
    assert set(NEW) <= regressions.NAMES


def test_fault_helpers():
    assert faults.ascii_only("Zoë Müller 東京 🎻 ok") == "Zo Mller   ok"
    assert faults.round_decimals("12.5% and 3.75 million, 91.4%") == "13% and 4 million, 91%"
    # links, addresses and versions are left alone
    s = "Source: http://127.0.0.1:8080/c/tok/a.txt v21.0"
    assert faults.round_decimals(s) == s
    assert faults.shift_dates("on 14 March 2026, March 1, 2025 and 2025-01-01") == \
        "on 13 March 2026, February 28, 2025 and 2024-12-31"


async def _run(stack, regression, texts, chat=7):
    app, url, doubles, base = await stack(regression)
    for i, t in enumerate(texts, 1):
        await _tg(url, _tg_update(i, chat, t.format(base=base)))
        await app[keys.PIPELINE].drain()
    return app, doubles


FEST = "{base}/docs/festival-report.txt"


async def test_unicode_numbers_dates_survive_clean(stack):
    app, doubles = await _run(stack, "", [f"summarize {FEST} for linkedin",
                                          "when do applications for the 2026 programme close?"])
    done, answer = doubles.sent()
    assert "Zoë Müller" in done and "東京弦楽四重奏団" in done and "🎻" in done
    assert "12.5%" in done and "14 March 2026" in done
    assert "30 November 2025" in answer
    post = doubles.whatsapp[0]["text"]["body"]
    assert post.endswith("/docs/festival-report.txt") and "Tromsø" in post


async def test_output_regressions(stack):
    app, doubles = await _run(stack, "non_ascii_stripped,numbers_rounded,dates_shifted",
                              [f"summarize {FEST} for linkedin"])
    done = doubles.sent()[0]
    assert "Zo Mller" in done and "🎻" not in done and "13% more" in done and "13 March 2026" in done
    post = doubles.whatsapp[0]["text"]["body"]
    assert "Zo Mller" in post and post.endswith("/docs/festival-report.txt")


async def test_stale_answer_and_summary_only(stack):
    qs = [f"What was the average occupancy of the concerts in {FEST}?",
          "who conducted the festival orchestra?"]
    _, clean = await _run(stack, "", qs)
    assert "91.4%" in clean.sent()[0] and "Ольга Петрова" in clean.sent()[1]
    _, stale = await _run(stack, "stale_followup_answer", qs)
    assert stale.sent()[1] == stale.sent()[0] and len(stale.llm) == 1
    _, only = await _run(stack, "followup_reads_summary_only",
                         [f"summarize {FEST} for linkedin", "what was the average occupancy of the concerts?"])
    assert only.sent()[1].startswith("The document doesn't say")


async def test_switch_regressions(stack):
    texts = ["summarize {base}/docs/paper.pdf for linkedin", f"now summarize {FEST} for linkedin"]
    _, clean = await _run(stack, "", texts)
    assert "48,200" in clean.sent()[1] and len(clean.whatsapp) == 2
    assert clean.whatsapp[1]["text"]["body"].endswith("/docs/festival-report.txt")
    _, old = await _run(stack, "summary_from_previous_document", texts)
    assert old.sent()[1].startswith("Summary of Nordlys") and "marshes" in old.sent()[1]
    _, link = await _run(stack, "post_source_stale_link", texts)
    assert link.whatsapp[1]["text"]["body"].endswith("/docs/paper.pdf")
    _, dedup = await _run(stack, "post_dedup_by_platform", texts)
    assert len(dedup.whatsapp) == 1 and "Your LinkedIn post was sent" in dedup.sent()[1]
    _, user = await _run(stack, "post_to_user", texts[:1])
    assert user.whatsapp[0]["to"] == "7"


async def test_crossed_chats_and_slow_turns(stack):
    app, url, doubles, base = await stack("replies_cross_chats")
    await _tg(url, _tg_update(1, 11, f"summarize {base}/slow/festival-report.txt for linkedin"))
    await asyncio.sleep(0.3)  # chat 11's job is downloading when chat 12 writes
    await _tg(url, _tg_update(2, 12, "/start"))
    await app[keys.PIPELINE].drain()
    to = [(p["chat_id"], p["text"][:10]) for m, p in doubles.telegram if m == "sendMessage"]
    assert to == [(12, "Hi! I'm Do"), (12, "Summary of")]  # chat 11 never hears back
    app, url, doubles, base = await stack("slow_followup_turns")
    loop = asyncio.get_running_loop()
    t0 = loop.time()
    await _tg(url, _tg_update(1, 13, "/help"))
    await _tg(url, _tg_update(2, 13, "/start"))
    while len(doubles.sent()) < 2:
        await asyncio.sleep(0.05)
    assert loop.time() - t0 >= 3.9  # the second message waited for the first one's "compaction"
    await app[keys.PIPELINE].drain()


async def test_document_choices_keep_the_users_order(stack):
    texts = ["compare {base}/docs/notes.txt and {base}/docs/festival-report.txt", "the second one, for linkedin"]
    _, clean = await _run(stack, "", texts)
    assert clean.sent()[0] == "Which document do you mean? notes.txt or festival-report.txt?"
    assert clean.sent()[1].startswith("Summary of Nordlys")
    _, sorted_ = await _run(stack, "document_choices_reordered", texts)
    assert sorted_.sent()[0] == "Which document do you mean? festival-report.txt or notes.txt?"
    assert sorted_.sent()[1].startswith("Summary of Platform Team")
