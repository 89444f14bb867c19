"""Source documents as text, and replies as claim sentences with their checkable facts.

The critic's ground truth is the document a case names (``source: paper.pdf``): read here
from ``fixtures/documents`` with the harness's own reader (never the agent's). A claim is a
sentence of the reply that asserts something; its facts are the numbers, dates and
capitalised names in it, which the offline critic holds to the ones the source contains.
"""

from __future__ import annotations

import functools
import re
from html.parser import HTMLParser
from pathlib import Path

_SENT_SPLIT = re.compile(r"(?<=[.!?])[\"')\]]*\s+(?=[\"'(\[]?[A-Z0-9])|\n+")
_URL = re.compile(r"https?://\S+|\bwww\.\S+")
_HASHTAG = re.compile(r"(?<!\w)[#@]\w+")
_BULLET = re.compile(r"^\s*(?:[-*•·▪●]|\d+[.)])\s+")
_NUMBER = re.compile(r"(?<![\w.])\d{1,3}(?:,\d{3})+(?:\.\d+)?|(?<![\w.])\d+(?:\.\d+)?")
#: A word in any alphabet ("Zoë", "Müller", "Ærø", "Тромсё"): letters, apostrophes, hyphens.
_WORD = re.compile(r"[^\W\d_](?:[^\W\d_]|['’-])*")
# Words that start sentences or headings capitalised without being names.
_NOT_NAMES = {
    "the", "a", "an", "this", "that", "these", "those", "it", "its", "they", "we", "our", "i", "in", "on",
    "at", "for", "to", "of", "and", "but", "or", "so", "if", "as", "by", "with", "from", "after", "before",
    "during", "while", "when", "what", "why", "how", "who", "which", "where", "there", "here", "new",
    "key", "summary", "source", "tl", "dr", "tldr", "read", "more", "note", "also", "however", "overall",
    "researchers", "study", "paper", "article", "report", "results", "findings", "finding", "methods",
    "conclusion", "conclusions", "background", "abstract", "points", "point", "post", "thread", "big",
    "good", "great", "bottom", "line", "takeaway", "takeaways", "first", "second", "third", "finally",
    "one", "two", "three", "some", "many", "most", "all", "each", "every", "both", "no", "not", "yes",
    "mon", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday",
    "january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
    "november", "december", "he", "she", "you", "your", "my", "us", "their", "his", "her", "imagine",
    "think", "did", "do", "does", "is", "are", "was", "were", "be", "can", "could", "will", "would",
    "should", "just", "only", "even", "still", "then", "than", "because", "since", "though", "although",
}
_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september",
           "october", "november", "december")
_NEGATIONS = re.compile(r"\b(?:not|no|never|none|neither|nor|without|cannot|failed to|did not|does not|"
                        r"do not|is not|was not|were not|are not|isn't|wasn't|weren't|aren't|didn't|doesn't|"
                        r"don't|can't|won't|unable)\b", re.I)
_WORD_NUMBERS = {
    "zero": "0", "one": "1", "two": "2", "three": "3", "four": "4", "five": "5", "six": "6", "seven": "7",
    "eight": "8", "nine": "9", "ten": "10", "eleven": "11", "twelve": "12", "thirteen": "13", "fourteen": "14",
    "fifteen": "15", "sixteen": "16", "seventeen": "17", "eighteen": "18", "nineteen": "19", "twenty": "20",
    "thirty": "30", "forty": "40", "fifty": "50", "sixty": "60", "seventy": "70", "eighty": "80",
    "ninety": "90", "hundred": "100", "half": "50", "third": "33",
}
#: Words a source uses for a count without writing the number ("twice-daily" = two a day).
_MULTIPLES = {"twice": "2", "thrice": "3", "dozen": "12"}


class _Text(HTMLParser):
    SKIP = {"script", "style", "noscript"}  # <head> stays: its <title> is part of the document
    BLOCK = {"p", "div", "li", "h1", "h2", "h3", "h4", "h5", "h6", "br", "tr", "section", "article", "title"}

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.skip = 0

    def handle_starttag(self, tag, attrs):
        if tag in self.SKIP:
            self.skip += 1
        elif tag in self.BLOCK:
            self.parts.append("\n")

    def handle_endtag(self, tag):
        if tag in self.SKIP and self.skip:
            self.skip -= 1
        elif tag in self.BLOCK:
            self.parts.append("\n")

    def handle_data(self, data):
        if not self.skip:
            self.parts.append(re.sub(r"\s+", " ", data))


def document_text(path: Path, *, title: bool = True, pages: int | None = None) -> str:
    """The text of a PDF, HTML or plain-text document (raises OSError/ValueError if unreadable).
    A PDF's metadata title comes first unless ``title=False``; ``pages``: only its first pages."""
    suffix = path.suffix.lower()
    if suffix == ".pdf":
        from pypdf import PdfReader

        reader = PdfReader(str(path))
        head = str((reader.metadata or {}).get("/Title") or "") if title else ""  # agents quote it
        text = head + "\n\n" + "\n".join((page.extract_text() or "") for page in reader.pages[:pages])
    elif suffix in (".html", ".htm", ".xhtml"):
        parser = _Text()
        parser.feed(path.read_text(encoding="utf-8", errors="replace"))
        text = "".join(parser.parts)
    else:
        text = path.read_text(encoding="utf-8", errors="replace")
    lines = [re.sub(r"[ \t\r\f\v\xa0]+", " ", ln).strip() for ln in text.split("\n")]
    return "\n".join(ln for ln in lines if ln)


def _join_wrapped(text: str) -> str:
    """PDF text breaks lines mid-sentence: a line that does not end a sentence, followed by
    one that starts in lower case or with a digit, continues it; so does a long body line
    (not a heading) cut before a capitalised word ("... and by the Nordic\nYouth Health Fund")."""
    text = re.sub(r"(?<=[^.!?:;\s])[ \t]*\n(?=[ \t]*[a-z0-9(])", " ", text or "")
    lines = text.split("\n")
    out: list[str] = []
    for ln in lines:
        prev = out[-1] if out else ""
        tail = re.split(r"(?<=[.!?])\s+", prev.strip())[-1]  # the unfinished sentence the line ends with
        if (len(prev) >= 60 and not re.search(r"[.!?:;\"')\]]\s*$", prev) and not _heading(tail)
                and re.match(r"\s*[A-Z][a-z]", ln) and len(_WORD.findall(tail)) >= 8):
            out[-1] = prev.rstrip() + " " + ln.lstrip()
        else:
            out.append(ln)
    return "\n".join(out)


#: Texts whose readings (``sentences``, ``_heading``, ``source_numbers``, ``claim_numbers``) are
#: kept: they depend on the text alone, and the critic reads the same source for every claim.
MEMO = 1 << 14


@functools.lru_cache(maxsize=MEMO)
def _heading(s: str) -> bool:
    """Title Case without sentence punctuation: a heading or a title, which asserts nothing."""
    long_words = [w for w in _WORD.findall(s) if len(w) > 3]
    caps = sum(1 for w in long_words if w[0].isupper())
    return bool(long_words) and caps / len(long_words) >= 0.7 and not re.search(r"[.!?]$", s.strip())


def sentences(text: str) -> list[str]:
    """Sentences and lines, bullets and URLs stripped; very short fragments dropped (a new list
    each call)."""
    return list(_sentences(text))


@functools.lru_cache(maxsize=MEMO)
def _sentences(text: str) -> tuple[str, ...]:
    out = []
    for part in _SENT_SPLIT.split(_join_wrapped(text)):
        s = _BULLET.sub("", _URL.sub("", part or "")).strip(" \t-–—:;")
        if len(_WORD.findall(s)) >= 3:
            out.append(s)
    return tuple(out)


def is_heading(s: str) -> bool:
    """A Title Case line without sentence punctuation: a headline (judged like any claim)."""
    return _heading(s)


_CHAT = re.compile(r"^(?:I\b|I['’](?:m|ve|ll|d)\b|your\s+\w+(?:\s+\w+)?\s+(?:post|message|summary|thread|tweet|reply)"
                   r"\s+(?:was|has been|is)\b|here(?:'s| is| are)\b|let me\b|sorry\b)", re.I)


_SHORT_CLAIM = re.compile(r"^\w+\s+(?:is|are|was|were|has|have|had)\s+(?:not\s+)?\w+\W*$", re.I)
_COMPARING = re.compile(r"^\s*(?:[A-Za-z]+er|more\s+\w+|less\s+\w+)\s+than\s", re.I)


_RECEIPT = re.compile(r"^\s*(?:\W\s*)?your\s+\w+(?:\s+\w+)?\s+(?:post|message|summary|thread|tweet|reply|story)\s+"
                      r"(?:was|has been|is|got)\s+(?:\w+\s+)?(?:sent|posted|published|delivered|scheduled|shared|"
                      r"queued|uploaded)\b.*$", re.I | re.M)


def content_text(text: str) -> str:
    """The text without delivery receipts ("Your LinkedIn post was sent to WhatsApp."): what an
    answer says, for comparing it with an approved answer, which has no receipt. The text as it
    is when nothing else would be left."""
    stripped = _RECEIPT.sub("", text).strip()
    return stripped if stripped else text


def conversational(sentence: str) -> bool:
    """The bot talking about itself or the delivery ("I couldn't find...", "Your post was sent"):
    not a claim about the document."""
    return bool(_CHAT.match(sentence.strip()))


def claims(reply: str) -> list[str]:
    """Claim sentences of a reply: sentences with at least four words once hashtags, mentions,
    URLs and ``Source:`` lines are gone (a question or a greeting asserts nothing, nor does the
    bot talking about itself: "I couldn't find...", "Your post was sent..."). Headlines are
    claims too: "Heat Pump Installations Halve" says something the source may contradict."""
    out = []
    for sentence in sentences(reply):
        if re.match(r"(?i)^(source|link|read more|via)\b", sentence) or sentence.endswith("?") \
                or conversational(sentence):
            continue
        # "According to <title>: <claim>", "Key finding: <claim>": the lead-in is not part of the claim
        while True:
            head, sep, rest = sentence.partition(": ")
            if not sep or not (len(_WORD.findall(head)) <= 6 or _heading(head)) or _COMPARING.match(head):
                break  # "Cheaper than LFP: 38 versus 61 dollars": the lead says what the figures show
            sentence = rest
        for s in [sentence]:
            s = _HASHTAG.sub("", s).strip(" \t-–—:;")
            n_words = len(_WORD.findall(s))
            # a terse answer ("About 11,000 homes.", "Every 6 months.") asserts its number
            # and so does a short sentence with a verb of being or having ("Children were included.")
            if n_words >= 4 or (n_words >= 1 and claim_numbers(s) and len(s) <= 60) \
                    or (n_words == 3 and _SHORT_CLAIM.search(s)):
                out.append(s)
    return out


def _norm_number(raw: str) -> str:
    n = raw.replace(",", "")
    if "." in n:
        n = n.rstrip("0").rstrip(".")
    return n


def numbers(text: str) -> set[str]:
    """Numbers as normalised strings (``1,200`` -> ``1200``, ``3.50`` -> ``3.5``)."""
    return {_norm_number(m.group(0)) for m in _NUMBER.finditer(text)}


def claim_numbers(text: str) -> set[str]:
    """A claim's numbers, digits and number words alike ("five years" -> 5), except "one"
    (a new set each call)."""
    return set(_claim_numbers(text))


@functools.lru_cache(maxsize=MEMO)
def _claim_numbers(text: str) -> frozenset[str]:
    found = numbers(text)
    for w in _WORD.findall(text.lower()):
        if w in _WORD_NUMBERS and w not in ("one", "half", "third"):
            found.add(_WORD_NUMBERS[w])
    return frozenset(found)


def source_numbers(text: str) -> set[str]:
    """The source's numbers, including those written as words (``thirty`` -> ``30``; a new set
    each call)."""
    return set(_source_numbers(text))


@functools.lru_cache(maxsize=256)
def _source_numbers(text: str) -> frozenset[str]:
    found = numbers(text)
    for w in _WORD.findall(text.lower()):
        if w in _WORD_NUMBERS:
            found.add(_WORD_NUMBERS[w])
        for part in w.split("-"):  # "twice-daily" says 2, "a dozen" 12
            if part in _MULTIPLES:
                found.add(_MULTIPLES[part])
    for m in re.finditer(r"\b(twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety)[- ](one|two|three|four|"
                         r"five|six|seven|eight|nine)\b", text.lower()):
        found.add(str(int(_WORD_NUMBERS[m.group(1)]) + int(_WORD_NUMBERS[m.group(2)])))
    return frozenset(found)


def names(text: str, known: set[str] | frozenset[str] = frozenset()) -> set[str]:
    """Capitalised words that are not sentence-initial function words: names of people, places,
    products, organisations (lower-cased for comparison). A sentence-initial capital counts
    only when it is one of the ``known`` names (e.g. the source's own)."""
    found = set()
    for s in sentences(text) or [text]:
        for i, m in enumerate(_WORD.finditer(s)):
            w = m.group(0).strip("'’-")
            if len(w) < 2 or not w[0].isupper():
                continue
            low = w.lower().removesuffix("'s").removesuffix("’s")
            if low in _NOT_NAMES or (i == 0 and not w[1:].isupper() and low in _NOT_NAMES):
                continue
            plain = w.replace("-", "").replace("'", "").replace("’", "")
            if i == 0 and plain.isalpha() and not any(c.isupper() for c in w[1:]) and low not in known:
                continue  # sentence-initial capital: ambiguous, not held against the reply
            found.add(low)
    return found


def months(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if w in _MONTHS}


def negations(text: str) -> tuple[int, int]:
    """Negation cues by kind: (``not``-like: not, n't, never, cannot, failed to; ``no``-like:
    no, none, without, neither, nor). Two texts whose counts differ say opposite things more
    often than not."""
    nots = nos = 0
    text = re.split(r"\bthan\b", text, maxsplit=1)[0]  # "more than those that did not": a comparison
    for m in _NEGATIONS.finditer(text):
        cue = m.group(0).lower()
        if cue in ("no", "none", "without", "neither", "nor"):
            nos += 1
        else:
            nots += 1
    return nots, nos


def negated(text: str) -> bool:
    return bool(_NEGATIONS.search(text))
