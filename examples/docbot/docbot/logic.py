"""The channel-independent decision procedure (contract: "Behaviour", steps 2-12).

``decide`` is pure: given the incoming message, the chat's session and the configuration it
returns the replies to send now, the session changes, and at most one ``Job`` (the slow work:
fetch, LLM calls, publishing) for the pipeline to run. Step 1 (dedup) needs the store and
lives in pipeline.py.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from . import instructions, language, messages as M, normalize, urls
from .config import PLATFORMS, Config

CANCEL_WORDS = frozenset({"stop", "cancel", "/cancel", "/stop"})
_PLATFORM_RE = re.compile(r"\b(twitter|linkedin|facebook|instagram|whatsapp)\b", re.I)
PASTED_URL = "pasted text"


@dataclass(frozen=True)
class Incoming:
    """One user message, already parsed from its channel's update."""
    channel: str            # "telegram" | "whatsapp"
    chat_id: str            # Telegram chat id / WhatsApp wa_id
    update_key: str         # Telegram update_id / WhatsApp message id
    kind: str = "text"      # "text" | "non_text" | "upload"
    text: str | None = None


@dataclass
class Job:
    """Slow work: fetch ``url`` (unless ``text`` is given), then summarize and post."""
    url: str
    platform: str | None
    title: str | None = None
    text: str | None = None
    instruction: instructions.Instruction | None = None  # audience/format/focus or a question
    kind: str = "summarize"       # multi-turn follow-ups: "shorter" | "question" (followups.py)
    question: str | None = None   # the follow-up question, for kind == "question"
    stale: bool = False           # delivered out of order: must not replace newer context


@dataclass
class Decision:
    rule: str
    replies: list[str] = field(default_factory=list)
    changes: dict = field(default_factory=dict)
    job: Job | None = None


def command_of(text: str) -> str:
    """'/start@DocBot now' -> '/start'; 'Stop' -> 'stop'."""
    t = text.strip().lower()
    if not t:
        return ""
    first = t.split()[0]
    if first.startswith("/"):
        return first.split("@", 1)[0]
    return t.rstrip(".!")


def platform_of(text: str) -> str | None:
    m = _PLATFORM_RE.search(language.strip_links(text))
    return m.group(1).lower() if m else None


def word_count(text: str) -> int:
    return len(text.split())


def is_cancel(text: str | None) -> bool:
    return bool(text) and command_of(text) in CANCEL_WORDS


def decide(msg: Incoming, session, cfg: Config) -> Decision:
    # 2. non-text messages and document uploads
    if msg.kind == "upload":
        return Decision("upload", [M.UPLOAD])
    if msg.kind != "text" or msg.text is None:
        return Decision("non_text", [M.NON_TEXT])
    text = msg.text

    # 3. empty or blank
    if cfg.on("crash_on_empty"):
        # REGRESSION crash_on_empty: the first word is taken without checking there is one,
        # so an empty/blank message raises IndexError here and nobody answers.
        text.split()[0]
    if not text.strip():
        return Decision("empty", [M.EMPTY])
    text = normalize.request(text)  # typos, capitals, accents, look-alikes, emoji, greetings

    # 4. commands
    cmd = command_of(text)
    if cmd == "/start":
        return Decision("start", [M.WELCOME])
    if cmd == "/help":
        return Decision("help", [M.HELP])
    if cmd in CANCEL_WORDS:
        if session.task or session.pending:
            return Decision("cancel", [M.CANCELLED],
                            {"task": None, "pending": None, "doc_url": None, "doc_title": None,
                             "doc_text": None})
        return Decision("cancel_nothing", [M.NOTHING_TO_CANCEL])

    # 5. too long
    words = word_count(text)
    pasted = False
    if words > cfg.max_words:
        if cfg.on("no_length_limit"):
            # REGRESSION no_length_limit: the paste itself becomes the document for the LLM.
            pasted = True
        else:
            return Decision("too_long", [M.TOO_LONG.format(words=words, limit=cfg.max_words)])

    # 6. English only
    if not cfg.on("english_only_removed"):  # REGRESSION english_only_removed skips this step
        if not language.is_english(text):
            return Decision("not_english", [M.NOT_ENGLISH])

    platform = platform_of(text)
    platform_change = {"platform": platform} if platform else {}
    if pasted:
        lines = [l.strip() for l in text.splitlines() if l.strip()]
        title = (lines[0] if lines else "pasted text")[:120]
        return Decision("pasted", [], platform_change,
                        Job(url=PASTED_URL, platform=platform, title=title, text=text))

    # 7. no link
    link = urls.find_link(text)
    if link is None:
        from .followups import decide_followup  # multi-turn: follow-ups from the session
        followup = decide_followup(msg, session, cfg, text)
        if followup is not None:
            return followup
        if session.pending == "platform" and session.doc_url:
            if platform:
                return Decision("platform_given", [], platform_change,
                                Job(url=session.doc_url, platform=platform,
                                    title=session.doc_title, text=session.doc_text))
            if not language.is_gibberish(text):
                from .followups import ask_platform  # same text; Telegram adds platform buttons
                return Decision("ask_platform_again", [ask_platform(msg.channel)])
        if language.is_gibberish(text):
            return Decision("gibberish", [M.GIBBERISH])
        return Decision("no_url", [M.NO_URL])

    from .followups import ask_document  # multi-turn: two links -> which document?
    ambiguous = ask_document(text, msg.channel, platform, cfg)
    if ambiguous is not None:
        return ambiguous

    # 8. malformed links and other schemes
    if cfg.on("url_validation_removed"):
        # REGRESSION url_validation_removed: whatever looks like a link is fetched.
        url = urls.coerce(link)
    else:
        verdict = urls.classify(link)
        if verdict == urls.INVALID:
            return Decision("invalid_url", [M.INVALID_URL.format(url=link)])
        if verdict == urls.SCHEME:
            return Decision("unsupported_scheme", [M.UNSUPPORTED_SCHEME.format(url=link)])
        url = link

    # 9. extensions that are not documents
    if not cfg.on("unsupported_types_accepted"):  # REGRESSION unsupported_types_accepted
        ext = urls.non_document_extension(url)
        if ext:
            return Decision("unsupported_type", [M.UNSUPPORTED_TYPE.format(kind=ext)])

    # 10-12. fetch (failures reported), ask for the platform if missing, summarize and post
    return Decision("job", [], platform_change, Job(url=url, platform=platform,
                                                    instruction=instructions.parse(text, link)))


def platform_limit(cfg: Config, platform: str) -> int:
    """The post length limit docbot holds a platform to (prompt and final trim)."""
    if cfg.on("ignore_platform_limit"):  # REGRESSION ignore_platform_limit: LinkedIn's for all
        return PLATFORMS["linkedin"]
    return PLATFORMS[platform]


def finalize_post(post: str, url: str, platform: str, limit: int | None = None) -> str:
    """Guarantee the contract's shape: the post ends with ``Source: <url>`` and fits."""
    limit = limit or PLATFORMS[platform]
    lines = post.rstrip().splitlines()
    while lines and (lines[-1].strip().lower().startswith("source:") or not lines[-1].strip()):
        lines.pop()
    body = "\n".join(lines).rstrip()
    tail = f"\n\nSource: {url}"
    room = limit - len(tail)
    if len(body) > room:
        body = body[: max(0, room - 1)].rstrip() + "…"
    return f"{body}{tail}" if body else f"Source: {url}"
