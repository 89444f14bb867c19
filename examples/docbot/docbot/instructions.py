"""The user's instruction beyond the platform: audience, format, focus, or a question.

``parse`` reads the request text (links removed) and returns an ``Instruction``; ``markers``
turns it into the system-prompt lines the LLM (and the offline model) read:
``AUDIENCE: investors``, ``FORMAT: bullet list``, ``FOCUS: the challenges``. A question
about the document ("what does <link> say about the sample size?") is answered instead of
summarized (contract: "Instructions and questions").

Small and rule-based on purpose: it recognises the phrasings the contract lists and nothing
else; an unrecognised instruction is simply not passed on.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from . import language


@dataclass(frozen=True)
class Instruction:
    audience: str | None = None   # "a general audience" | "investors" | "a 10-year-old" | ...
    format: str | None = None     # "bullet list" | "key points" | "one sentence"
    focus: str | None = None      # "the challenges", "the methods", ...
    question: str | None = None   # the question, with the link replaced by "the document"

    @property
    def empty(self) -> bool:
        return not (self.audience or self.format or self.focus or self.question)


_AUDIENCE = [
    (re.compile(r"\b(?:for|to)\s+(?:a|an)\s+(\d{1,2}|ten|eight|nine|twelve|seven)[- ]year[- ]old\b", re.I),
     lambda m: f"a {_num(m.group(1))}-year-old"),
    (re.compile(r"\b(?:for|to)\s+(?:kids|children|a child)\b", re.I), lambda m: "a 10-year-old"),
    (re.compile(r"\bfor\s+(?:a\s+|the\s+)?general\s+(?:audience|public|readers?)\b", re.I),
     lambda m: "a general audience"),
    (re.compile(r"\bfor\s+(?:the\s+)?(?:general\s+)?public\b", re.I), lambda m: "a general audience"),
    (re.compile(r"\bfor\s+(?:non-?experts|beginners|laypeople|lay readers)\b", re.I),
     lambda m: "a general audience"),
    (re.compile(r"\bfor\s+(?:our\s+|potential\s+|the\s+)?(investors?|shareholders)\b", re.I),
     lambda m: "investors"),
    (re.compile(r"\bfor\s+(?:our\s+|the\s+)?(employees|staff|new hires)\b", re.I), lambda m: "employees"),
    (re.compile(r"\bfor\s+(?:our\s+|the\s+)?(customers|buyers|users)\b", re.I), lambda m: "customers"),
    (re.compile(r"\bfor\s+(?:the\s+)?(experts|scientists|researchers|specialists)\b", re.I),
     lambda m: "experts"),
]
_FORMAT = [
    (re.compile(r"\b(?:as|in)\s+(?:a\s+)?(?:bullet(?:ed)?\s*(?:list|points)|bullets|list)\b|\bbullet points\b",
                re.I), "bullet list"),
    (re.compile(r"\b(?:key|main)\s+(?:points|takeaways|facts)\b|\btakeaways\b", re.I), "key points"),
    (re.compile(r"\b(?:in\s+)?(?:one|a single|1)[- ]sentence\b", re.I), "one sentence"),
]
_FOCUS = re.compile(
    r"\b(?:focus(?:ing|ed)?\s+on|concentrat(?:e|ing)\s+on|with\s+(?:a\s+|an\s+)?(?:focus|emphasis)\s+on|"
    r"emphasi[sz]ing|(?:on|about|regarding)(?=\s+the\s))\s+(?:the\s+)?([a-z][a-z \-]{2,40}?)"
    r"(?=\s*(?:$|[,.;:!?)]|\s(?:for|and|in|as|to|with|from|please)\b))", re.I)
_QUESTION_START = re.compile(
    r"^\s*(?:what|how|who|whom|which|when|where|why|does|did|do|is|are|was|were|can|could you tell|"
    r"tell me)\b", re.I)
_SUMMARY_VERBS = re.compile(r"\b(summari[sz]e|summary|post|tweet|write|explain|describe)\b", re.I)
_WORDS = {"ten": 10, "eight": 8, "nine": 9, "twelve": 12, "seven": 7}
_PLATFORMS = {"twitter", "linkedin", "facebook", "instagram", "whatsapp"}
_NOT_FOCUS = {"document", "paper", "article", "report", "link", "file", "page", "text", "pdf",
              "manual", "policy"} | _PLATFORMS


def _num(word: str) -> int:
    return int(word) if word.isdigit() else _WORDS[word.lower()]


def _question(text: str, link: str | None) -> str | None:
    plain = text.replace(link, "the document") if link else text
    plain = re.sub(r"\s+", " ", plain).strip()
    if not (_QUESTION_START.match(plain) or plain.endswith("?")):
        return None
    if _SUMMARY_VERBS.search(plain) and not plain.endswith("?"):
        return None
    if re.search(r"\b(summari[sz]e|summary)\b", plain, re.I):
        return None  # "could you summarize X?" is a request, not a question about X
    return plain


def parse(text: str, link: str | None = None) -> Instruction:
    """The instruction in ``text``; ``link`` (the document URL as written) is left out."""
    text = text or ""
    question = _question(text, link)
    if question:
        return Instruction(question=question)
    bare = re.sub(r"\s+", " ", language.strip_links(text)).strip()
    audience = next((f(m) for rx, f in _AUDIENCE for m in [rx.search(bare)] if m), None)
    if audience is None and re.search(r"\bexplain\w*\b.*\b(?:simply|simple terms|plain (?:english|language))\b",
                                      bare, re.I):
        audience = "a general audience"
    fmt = next((name for rx, name in _FORMAT if rx.search(bare)), None)
    focus = None
    for m in _FOCUS.finditer(bare):
        cand = m.group(1).strip(" -").lower()
        if cand and cand.split()[0] not in _NOT_FOCUS and not (set(cand.split()) & _PLATFORMS):
            focus = "the " + cand
            break
    return Instruction(audience=audience, format=fmt, focus=focus)


def markers(instr: Instruction | None, *, audience: bool = True) -> str:
    """System-prompt lines for ``instr`` (``audience=False`` leaves audience and format out)."""
    if instr is None or instr.empty:
        return ""
    lines = []
    if audience and instr.audience:
        lines.append(f"AUDIENCE: {instr.audience}")
    if audience and instr.format:
        lines.append(f"FORMAT: {instr.format}")
    if instr.focus:
        lines.append(f"FOCUS: {instr.focus}")
    if not lines:
        return ""
    return ("\n" + "\n".join(lines) + "\nFollow these instructions: write for that audience, in that "
            "format, about that focus, still using only facts stated in the document.")
