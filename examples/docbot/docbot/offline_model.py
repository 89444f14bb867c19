"""The offline, deterministic model behind POST /offline/v1/chat/completions.

OpenAI-compatible request/response shape. It reads markers from the system prompt:
``TASK: summarize|post``, ``PLATFORM: <name>``, ``MAX_CHARS: <n>``; the user message starts
with ``Source: <url>`` (optionally followed by ``Title: <title>``), then the document text.

- summary: extractive. Sections titled Acknowledgements/Acknowledgments/References/Funding
  are dropped; sentences are scored by normalized content-word frequency; the top 3 are kept
  in document order.
- post: ``{headline}\\n\\n{key point} #{Hashtag}\\n\\nSource: {url}``, trimmed to the limit.
- ``AUDIENCE:`` / ``FORMAT:`` / ``FOCUS:`` markers, ``TASK: answer`` with ``QUESTION:``, and the
  preference for a document's summary section (Abstract, Executive summary, Key findings):
  offline_reasoning.py.

Pure functions of the request: same request, same answer. No I/O, no dependencies.
"""

from __future__ import annotations

import hashlib
import json
import re
import time

PLATFORM_LIMITS = {"twitter": 280, "linkedin": 3000, "facebook": 2000, "instagram": 2200,
                   "whatsapp": 1000}
DROP_SECTIONS = re.compile(r"^(?:\d+[.)]?\s*)?(acknowledg(?:e)?ments?|references|funding|"
                           r"bibliography)\b", re.I)
TOKEN_RE = re.compile(r"\w+|[^\w\s]", re.U)
_SENT_SPLIT = re.compile(r"(?<=[.!?])[\"')\]]?\s+(?=[A-Z0-9\"'(\[])")
_WORD = re.compile(r"[a-z][a-z'\-]+")
STOP = frozenset("""a about above after again against all also am an and any are as at be because
been before being below between both but by can could did do does doing down during each few
for from further had has have having he her here hers herself him himself his how however i if
in into is it its itself just may me might more most must my myself no nor not now of off on
once only or other our ours out over own per same she should so some such than that the their
theirs them themselves then there these they this those through thus to too under until up upon
us very was we were what when where which while who whom why will with within without would
yet you your yours et al using used use also one two three new fig figure table section""".split())


def count_tokens(text: str) -> int:
    """A simple, deterministic tokenizer: words and single punctuation marks."""
    return len(TOKEN_RE.findall(text or ""))


def _marker(system: str, name: str) -> str | None:
    m = re.search(rf"^\s*{name}\s*:\s*(.+?)\s*$", system, re.M | re.I)
    return m.group(1) if m else None


def _parse_user(user: str) -> tuple[str, str, str]:
    """(url, title, body) from the user message."""
    url = title = ""
    lines = user.split("\n")
    i = 0
    while i < len(lines) and i < 4:
        m = re.match(r"\s*(Source|Title)\s*:\s*(.*)$", lines[i])
        if not m:
            break
        if m.group(1).lower() == "source":
            url = m.group(2).strip()
        else:
            title = m.group(2).strip()
        i += 1
    return url, title, "\n".join(lines[i:]).strip()


_BULLET = re.compile(r"^(?:[-*\u2022]|\d+[.)])\s+")
_ENDS = re.compile(r"[.!?][\"'\u201d)\]]?$")


def _is_heading(line: str) -> bool:
    s = line.strip()
    if not s or len(s) > 60 or s[-1] in ".!?,;:" or len(s.split()) > 6:
        return False
    return s[0].isupper() or s[0].isdigit()


def sentences(text: str) -> list[str]:
    """Sentences of the kept sections (headings and dropped sections removed)."""
    blocks: list[list[str]] = [[]]
    dropping = False
    for line in text.splitlines():
        s = line.strip()
        if not s:
            blocks.append([])
            continue
        if _is_heading(s):
            dropping = bool(DROP_SECTIONS.match(s))
            blocks.append([])
            continue
        if dropping:
            continue
        if _BULLET.match(s):  # list items are sentences of their own
            blocks.append([_BULLET.sub("", s)])
            blocks.append([])
            continue
        blocks[-1].append(s)
    out: list[str] = []
    for block in blocks:
        para = re.sub(r"\s+", " ", " ".join(block)).strip()
        para = re.sub(r"(\w)- (\w)", r"\1\2", para)
        for sent in _SENT_SPLIT.split(para):
            sent = sent.strip()
            if len(sent.split()) >= 4 and _ENDS.search(sent):
                out.append(sent)
    return out


def _content_words(s: str) -> list[str]:
    return [w.strip("'-") for w in _WORD.findall(s.lower()) if w.strip("'-") not in STOP
            and len(w.strip("'-")) > 2]


def ranked(sents: list[str]) -> list[tuple[float, int]]:
    """(score, index), best first; ties broken by position."""
    freq: dict[str, int] = {}
    for s in sents:
        for w in _content_words(s):
            freq[w] = freq.get(w, 0) + 1
    if not freq:
        return [(0.0, i) for i in range(len(sents))]
    top = max(freq.values())
    scores = []
    for i, s in enumerate(sents):
        ws = _content_words(s)
        score = sum(freq[w] / top for w in ws) / len(ws) if len(ws) >= 3 else 0.0
        scores.append((round(score, 9), i))
    return sorted(scores, key=lambda t: (-t[0], t[1]))


def summarize(text: str, n: int = 3) -> str:
    sents = sentences(text)
    if not sents:
        words = text.split()
        return " ".join(words[:60]) + (" ..." if len(words) > 60 else "")
    chosen: list[int] = []
    for _, i in ranked(sents):
        words = set(_content_words(sents[i]))
        if any(_overlap(words, set(_content_words(sents[j]))) > 0.5 for j in chosen):
            continue  # near-duplicate of a sentence already chosen
        chosen.append(i)
        if len(chosen) == n:
            break
    return " ".join(sents[i] for i in sorted(chosen))


def _overlap(a: set[str], b: set[str]) -> float:
    return len(a & b) / max(1, min(len(a), len(b)))


def _hashtag(text: str) -> str:
    freq: dict[str, int] = {}
    lower_words = set(re.findall(r"\b[a-z]+\b", text))  # skip names (always capitalized)
    for w in _content_words(text):
        if w.isalpha() and w in lower_words:
            freq[w] = freq.get(w, 0) + 1
    if not freq:
        return "#DocBot"
    word = sorted(freq.items(), key=lambda kv: (-kv[1], kv[0]))[0][0]
    return "#" + word.capitalize()


def _cut(s: str, n: int) -> str:
    if len(s) <= n:
        return s
    if n <= 1:
        return ""
    cut = s[: n - 1].rsplit(" ", 1)[0] if " " in s[: n - 1] else s[: n - 1]
    return cut.rstrip(" ,;:") + "…"


def write_post(text: str, url: str, title: str, platform: str, limit: int | None = None) -> str:
    limit = limit or PLATFORM_LIMITS.get(platform, 1000)
    sents = sentences(text)
    headline = title or (text.strip().splitlines()[0] if text.strip() else "New document")
    key = sents[ranked(sents)[0][1]] if sents else " ".join(text.split()[:40])
    tag = _hashtag(text)
    tail = f"\n\nSource: {url}"
    head = headline.strip()
    room = limit - len(tail)
    body_key = f"{key} {tag}".strip()
    if len(head) + 2 + len(body_key) > room:
        head = _cut(head, max(20, room // 4))
        key_room = room - len(head) - 2 - len(tag) - 1
        body_key = (f"{_cut(key, key_room)} {tag}" if key_room > 10 else tag)
    post = f"{head}\n\n{body_key}{tail}"
    if len(post) > limit:  # only when the URL itself is enormous
        post = _cut(post, limit)
    return post


# -- multi-turn follow-ups (TASK: followup): "make it shorter", questions about the document --

def followup(text: str, kind: str, question: str) -> str:
    """``FOLLOWUP: shorter`` -> the one best sentence; ``FOLLOWUP: question`` -> the (at most
    two) sentences sharing the most content words with ``QUESTION``, in document order."""
    sents = sentences(text)
    if kind.strip().lower() == "shorter" or not question.strip():
        return summarize(text, 1)
    if not sents:
        return summarize(text, 1)
    q = set(_content_words(question))
    q |= {w.rstrip("s") for w in q}
    scored = []
    for i, s in enumerate(sents):
        words = set(_content_words(s))
        words |= {w.rstrip("s") for w in words}
        scored.append((len(q & words), i))
    best = sorted(scored, key=lambda t: (-t[0], t[1]))
    if not best or best[0][0] == 0:
        return summarize(text, 1)
    chosen = sorted(i for n, i in best[:2] if n > 0)
    return " ".join(sents[i] for i in chosen)


def complete(request: dict) -> dict:
    """An OpenAI chat.completion response for ``request``."""
    from . import offline_reasoning  # instruction following; imports this module
    messages = request.get("messages") or []
    system = "\n".join(str(m.get("content") or "") for m in messages if m.get("role") == "system")
    user = next((str(m.get("content") or "") for m in reversed(messages)
                 if m.get("role") == "user"), "")
    task = (_marker(system, "TASK") or "summarize").strip().lower()
    url, title, body = _parse_user(user)
    if task == "post":
        platform = (_marker(system, "PLATFORM") or "linkedin").strip().lower()
        try:
            limit = int(_marker(system, "MAX_CHARS") or 0) or None
        except ValueError:
            limit = None
        marks = offline_reasoning.read_markers(system)  # AUDIENCE/FORMAT/FOCUS, summary sections
        content = offline_reasoning.write_post(body, url, title, platform, limit, marks)
    elif task == "answer":  # a question about the document (docbot/offline_reasoning.py)
        content = offline_reasoning.answer(body, offline_reasoning.read_markers(system))
    elif task == "followup":  # multi-turn follow-ups (docbot/followups.py)
        content = followup(body, _marker(system, "FOLLOWUP") or "", _marker(system, "QUESTION") or "")
    else:  # summary sections first; AUDIENCE/FORMAT/FOCUS honoured (docbot/offline_reasoning.py)
        content = offline_reasoning.summarize(body, offline_reasoning.read_markers(system))
    prompt_tokens = sum(count_tokens(str(m.get("content") or "")) for m in messages)
    completion_tokens = count_tokens(content)
    digest = hashlib.sha256(json.dumps(request, sort_keys=True, default=str).encode()).hexdigest()
    return {
        "id": f"chatcmpl-offline-{digest[:24]}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": request.get("model") or "offline",
        "system_fingerprint": "docbot-offline-1",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                     "logprobs": None, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                  "total_tokens": prompt_tokens + completion_tokens},
    }
