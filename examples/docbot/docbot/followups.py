"""Multi-turn behaviour: follow-ups answered from the session, and clarifying ambiguous requests.

Contract: docs/DOCBOT_CONTRACT.md, "Multi-turn behaviour". Hooked into logic.decide (before
step 7's NO_URL and before step 8 for two links) and pipeline._run_job (follow-up jobs).

- Two or more links in one message: WHICH_DOCUMENT with one button per document,
  ``pending: "document"`` and ``candidates`` in the session. The answer (a button, "the
  first one", "2", a file name) picks one and the request goes on with the platform given
  in either message.
- With a document in the session and nothing pending, a message without a link may be:
  a platform ("now for twitter") -> a new post from the stored document; "try again" /
  "retry" -> the last request again; "make it shorter" -> a one-sentence summary; a
  question ("what were the methods?") -> an answer from the stored document. None of them
  fetches the document again.
"""

from __future__ import annotations

import json
import re
from posixpath import basename
from urllib.parse import urlsplit

from . import messages as M
from .logic import Decision, Job, platform_of

WHICH_DOCUMENT = "Which document do you mean? {choices}"
SHORTER = "Shorter summary of {title}:\n{summary}"
ANSWER = "From {title}:\n{answer}"
FOLLOWUP_SYSTEM = (
    "You are DocBot, an assistant that answers follow-up requests about a document.\n"
    "TASK: followup\n"
    "FOLLOWUP: {kind}\n"
    "{question}"
    "Use only facts stated in the document. Reply with the answer only.")

_RETRY = re.compile(r"^\s*(?:please\s+)?(?:try(?:\s+it)?\s+again|retry|again|one more time)\b", re.I)
_SHORTER = re.compile(r"\b(?:shorter|shorten|more concise|tl;?dr|too long)\b", re.I)
_QUESTION = re.compile(r"^\s*(?:what|how|who|which|when|where|why|does|did|do|is|are|was|were|can|tell me)\b"
                       r"|\?\s*$", re.I)
_ORDINALS = {"second": 1, "2": 1, "two": 1, "third": 2, "3": 2, "last": -1, "first": 0, "1": 0, "one": 0}
_REFERENCE = re.compile(r"\b(?:it|this|that|the (?:document|paper|file|article|doc))\b", re.I)


class Rich(str):
    """A reply text that also carries buttons: ``Rich(text, buttons=[(label, data), ...])``.

    A ``str`` everywhere else, so reply texts (and the checks on them) are unchanged."""

    buttons: tuple[tuple[str, str], ...] = ()

    def __new__(cls, text: str, buttons=()):
        obj = super().__new__(cls, text)
        obj.buttons = tuple(buttons)
        return obj


def ask_platform(channel: str) -> str:
    """ASK_PLATFORM; on Telegram with an inline keyboard of the platforms (same text)."""
    if channel != "telegram":
        return M.ASK_PLATFORM
    return Rich(M.ASK_PLATFORM, [(p, p) for p in ("twitter", "linkedin", "facebook", "instagram", "whatsapp")])


def all_links(text: str) -> list[str]:
    from .urls import OK, classify, find_link

    out, rest = [], text or ""
    while True:
        link = find_link(rest)
        if link is None:
            return out
        if classify(link) == OK and link not in out:
            out.append(link)
        rest = rest[rest.index(link) + len(link):]


def name_of(url: str) -> str:
    return basename(urlsplit(url).path.rstrip("/")) or url


def which_document(candidates: list[str], channel: str) -> str:
    names = [name_of(u) for u in candidates]
    text = WHICH_DOCUMENT.format(choices=" or ".join(names) + "?")
    return Rich(text, [(n[:20], n) for n in names[:3]])


def ask_document(text: str, channel: str, platform: str | None, cfg=None) -> Decision | None:
    """Two or more links in one message: ask which one (logic.decide, before step 8)."""
    links = all_links(text)
    if len(links) < 2:
        return None
    if cfg is not None and cfg.on("document_choices_reordered"):
        links = sorted(set(links))  # REGRESSION document_choices_reordered: deduplicated, order lost
    # the platform of this request only: a platform is never taken from an earlier turn
    changes = {"pending": "document", "candidates": json.dumps(links), "platform": platform}
    return Decision("ask_document", [which_document(links, channel)], changes)


def _pick(text: str, candidates: list[str]) -> str | None:
    t = text.strip().lower()
    m = re.fullmatch(r"doc:(\d+)", t)
    if m and 0 < int(m.group(1)) <= len(candidates):
        return candidates[int(m.group(1)) - 1]
    for url in candidates:
        name = name_of(url).lower()
        stem = name.rsplit(".", 1)[0]
        if url.lower() in t or name in t or re.search(rf"\b{re.escape(stem)}\b", t):
            return url
    for word, i in _ORDINALS.items():
        if re.search(rf"\b{word}\b", t) and (i == -1 or i < len(candidates)):
            return candidates[i]
    return None


def decide_followup(msg, session, cfg, text: str) -> Decision | None:
    """A message without a link, read against the session (logic.decide, step 7)."""
    platform = platform_of(text)
    if session.pending == "document" and session.candidates:
        candidates = json.loads(session.candidates)
        url = _pick(text, candidates)
        if url is None:
            return Decision("ask_document_again", [which_document(candidates, msg.channel)],
                            {"platform": platform} if platform else {})
        chosen = platform or session.platform
        changes = {"pending": None, "candidates": None}
        if platform:
            changes["platform"] = platform
        return Decision("document_chosen", [], changes, Job(url=url, platform=chosen))
    if not session.doc_url or session.pending:
        return None
    stored = dict(url=session.doc_url, title=session.doc_title, text=session.doc_text)
    if _RETRY.search(text):
        if not session.platform:
            return None
        return Decision("retry", [], {}, Job(platform=session.platform, **stored))
    if _SHORTER.search(text):
        return Decision("shorter", [], {}, Job(platform=session.platform, kind="shorter", **stored))
    if platform:
        return Decision("platform_switch", [], {"platform": platform}, Job(platform=platform, **stored))
    if _QUESTION.search(text):  # answered by the pipeline's question path (instructions.py)
        from .instructions import Instruction
        if cfg.on("followup_reads_summary_only") and session.last_summary:
            stored["text"] = session.last_summary  # REGRESSION followup_reads_summary_only: the summary as context
        return Decision("question", [], {}, Job(platform=session.platform, **stored,
                                                 instruction=Instruction(question=text.strip())))
    return None


async def run_followup(pipeline, msg, job: Job) -> None:
    """A follow-up job: one LLM call over the stored document, one reply; no fetch, no post."""
    from .llm import LLMError, user_message

    chat = msg.chat_id
    pipeline.store.update(chat, task="followup")
    await pipeline.channels[msg.channel].typing(chat)
    question = f"QUESTION: {job.question}\n" if job.kind == "question" else ""
    system = FOLLOWUP_SYSTEM.format(kind=job.kind, question=question)
    try:
        answer = await pipeline.llm.chat(pipeline.cfg.summary_model, system,
                                         user_message(job.url, job.title or job.url, job.text or ""), chat)
    except LLMError:
        pipeline.store.update(chat, task=None)
        await pipeline.reply(msg, M.LLM_FAILED)
        return
    title = job.title or job.url
    if job.kind == "shorter":
        pipeline.store.update(chat, task=None, last_summary=answer)
        await pipeline.reply(msg, SHORTER.format(title=title, summary=answer))
    else:
        pipeline.store.update(chat, task=None)
        await pipeline.reply(msg, ANSWER.format(title=title, answer=answer))


def doc_fields(cfg, session, doc, job=None) -> dict:
    """The session's document (and platform) fields for a newly fetched ``doc``.

    A job from a message delivered out of order (``job.stale``: an older Telegram update
    arriving after a newer one) is still answered, but leaves the newer context alone."""
    platform = {"platform": job.platform} if job is not None and job.platform else {}
    if job is not None and job.stale and session.doc_url:
        return {}
    if cfg.on("old_document_kept_after_switch") and session.doc_url and session.doc_url != doc.url:
        return platform  # REGRESSION old_document_kept_after_switch: the previous document stays
    return {"doc_url": doc.url, "doc_title": doc.title, "doc_text": doc.text, **platform}


def is_stale(pipeline, msg) -> bool:
    """True when a newer Telegram update of this chat was already seen (update ids grow);
    WhatsApp message ids carry no order, so WhatsApp messages are never stale."""
    if msg.channel != "telegram" or not str(msg.update_key).isdigit():
        return False
    seen = getattr(pipeline, "_last_update", None)
    if seen is None:
        seen = pipeline._last_update = {}
    key, seq = f"{msg.channel}:{msg.chat_id}", int(msg.update_key)
    stale = seq < seen.get(key, -1)
    seen[key] = max(seq, seen.get(key, -1))
    return stale
