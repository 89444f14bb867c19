"""The registry of seeded regressions.

Each regression is switched on by name through DOCBOT_REGRESSION (comma separated). The
code that each one changes is marked at its single switch point with a comment
``# REGRESSION <name>``; grep for it.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Regression:
    name: str
    layer: str
    description: str


REGISTRY: tuple[Regression, ...] = (
    Regression("url_validation_removed", "robustness",
               "malformed links (htps://, bare domains, ftp://) are fetched instead of rejected"),
    Regression("crash_on_empty", "robustness",
               "an empty or blank message raises in the handler; the user gets no reply"),
    Regression("english_only_removed", "robustness",
               "non-English requests are processed instead of politely refused"),
    Regression("no_length_limit", "robustness",
               "10,000-word pastes are sent to the LLM instead of being refused"),
    Regression("duplicate_replies", "robustness", "every reply is sent twice"),
    Regression("no_update_dedup", "robustness",
               "a redelivered update (same update_id or wamid) is processed again"),
    Regression("unsupported_types_accepted", "robustness",
               '.jpg/.mp4 links are fetched and "summarized"'),
    # multi-turn layer (issue 4); switch points: pipeline.py / retry.py / followups.py
    Regression("state_lost_between_turns", "multiturn",
               "the session's document is forgotten when the next message arrives"),
    Regression("cancel_ignored", "multiturn",
               "'stop' is answered CANCELLED but the running job goes on and posts"),
    Regression("old_document_kept_after_switch", "multiturn",
               "a new link is summarized but the session keeps the previous document"),
    Regression("no_retry_after_llm_error", "multiturn",
               "a transient LLM failure (429, 5xx, timeout) is never retried"),
    Regression("retry_loop_unbounded", "multiturn",
               "a failing LLM call is retried without limit"),
    # cost layer (issue 5): switched in llm.py (LLMClient._prompt / LLMClient.summary)
    Regression("prompt_sent_twice", "cost", "the document is included twice in every LLM prompt"),
    Regression("summary_loop", "cost", "the summary is 'refined' in a loop: 4 summary calls instead of 1"),
    Regression("slow_path", "cost", "a slow summarizer path: about 2 s added before the summary and the reply"),
    Regression("no_truncation", "cost", "long documents are sent whole instead of cut to 6,000 words"),
    # reasoning layer (issue 3); switch points: llm.py / logic.py / pipeline.py, behaviour in faults.py
    Regression("summarize_acknowledgements", "reasoning",
               "the summary and post are about the acknowledgements, funding and references, not the findings"),
    Regression("ignore_platform_limit", "reasoning",
               "posts are held to LinkedIn's 3,000 characters on every platform (tweets over 280)"),
    Regression("drop_audience", "reasoning",
               "the audience and format instruction (investors, 10-year-old, bullet list...) is ignored"),
    Regression("invent_number", "reasoning",
               "the summary and post state an inflated figure that is not in the document"),
    Regression("answer_unanswerable", "reasoning",
               "a question the document does not answer gets an invented answer instead of 'doesn't say'"),
    # issue 11: where regressions hide (follow-ups, document switches, later turns, non-ASCII
    # text, several chats at once, the post's recipient and link); switch points: pipeline.py,
    # followups.py, llm.py, behaviour in faults.py
    Regression("stale_followup_answer", "multiturn",
               "answers are cached per chat and document, not per question: a follow-up question gets the previous answer"),
    Regression("summary_from_previous_document", "multiturn",
               "after a document switch the new document is fetched but the old one's text is summarized under the new title"),
    Regression("slow_followup_turns", "multiturn",
               "after each reply a history compaction holds the chat's lock for 4 s: the first turn is fast, the next message waits"),
    Regression("replies_cross_chats", "multiturn",
               "replies go to the chat that wrote last (a process-global current chat), not to the chat that asked"),
    Regression("post_to_user", "multiturn",
               "the platform post is sent to the requesting user's number instead of DOCBOT_PUBLISH_TO"),
    Regression("post_source_stale_link", "multiturn",
               "after a document switch the post's Source: line links the previous document"),
    Regression("post_dedup_by_platform", "multiturn",
               "a second post for the same platform in a chat is silently skipped (anti-spam keyed without the document), DONE still says sent"),
    Regression("followup_reads_summary_only", "multiturn",
               "follow-up questions are answered from the last summary instead of the document: details outside it 'are not in the document'"),
    Regression("document_choices_reordered", "multiturn",
               "two links are deduplicated through sorted(set(...)): 'the first one' / 'the second' pick by alphabetical order, not the user's"),
    Regression("non_ascii_stripped", "reasoning",
               "model output is filtered to ASCII: accents, non-Latin scripts and emoji vanish from summaries, posts and answers"),
    Regression("numbers_rounded", "reasoning",
               "decimals in model output are rounded to whole numbers (12.5% -> 13%, 3.75 million -> 4 million)"),
    Regression("dates_shifted", "reasoning",
               "dates in replies to the user come out one day early (a midnight UTC date shown in a zone west of UTC)"),
    # issue 22: regressions no hand-written check pins; only what the accepted nights did catches them
    Regression("hedges_removed", "reasoning",
               "a 'make it confident' rewrite: 'may reduce' -> 'reduces', 'might'/'could' dropped, 'about 30' -> '30'"),
    Regression("replies_split", "reasoning", "replies over 700 characters are split into several messages"),
    Regression("history_resent", "cost", "the whole chat's earlier prompts and answers are re-sent on every LLM call"),
    Regression("digit_swap", "robustness",
               "the first number of every model answer has two of its digits swapped (12.5% -> 21.5%, 1,240 -> 1,420)"),
    Regression("slow_leak", "cost",
               "a cache that is never emptied is scanned before every reply: each reply waits 6 ms more than the last, up to 2 s"),
    Regression("name_swap", "robustness",
               "two names of every reply trade places (Oslo <-> Bergen): a bad entity 'linker' mixes up its first two"),
    Regression("percent_points", "reasoning",
               "a 'style' rewrite says percentage points for percent (12 percent -> 12 percentage points, 40% -> 40 points)"),
    Regression("year_shift", "reasoning",
               "the first year of every model answer comes out one later (a 2019 survey -> a 2020 survey)"),
)

NAMES = frozenset(r.name for r in REGISTRY)


class UnknownRegression(ValueError):
    """DOCBOT_REGRESSION names a regression that does not exist."""


def parse(value: str | None) -> frozenset[str]:
    """The set of regressions named in ``value`` (comma/space separated); unknown -> error."""
    names = {n.strip() for n in (value or "").replace(" ", ",").split(",") if n.strip()}
    unknown = sorted(names - NAMES)
    if unknown:
        raise UnknownRegression(
            f"unknown regression(s) in DOCBOT_REGRESSION: {', '.join(unknown)} "
            f"(known: {', '.join(r.name for r in REGISTRY)})")
    return frozenset(names)


def active(value: str | None = None) -> frozenset[str]:
    """Regressions switched on; reads DOCBOT_REGRESSION when ``value`` is None."""
    if value is None:
        import os
        value = os.environ.get("DOCBOT_REGRESSION", "")
    return parse(value)


def listing() -> str:
    """``name<TAB>layer<TAB>what it breaks``, one line per regression."""
    return "\n".join(f"{r.name}\t{r.layer}\t{r.description}" for r in REGISTRY)
