"""The offline model's instruction following: audience, format, focus and questions.

offline_model.complete reads the system-prompt markers (``AUDIENCE:``, ``FORMAT:``,
``FOCUS:``, ``TASK: answer`` + ``QUESTION:``) and hands them here. Everything stays
extractive and grounded: sentences are picked from the document (and at most shortened at
a clause boundary or stripped of parentheses), never written.

- summary: when the document has a summary section (Abstract, Summary, Executive summary,
  Key findings, Overview), the default summary is drawn from it; acknowledgements, funding
  and references are never used.
- focus ("the challenges"): sentences are re-weighted by the focus words (and a few
  synonyms), and sentences under a matching section heading ("Methods") count double.
- audience: investors -> sentences with figures and outcomes first; a 10-year-old ->
  short sentences, parentheses removed, long sentences cut at a clause; general -> no
  parentheses.
- format: bullet list / key points -> ``- `` lines; one sentence -> the single best sentence.
- answer: the sentence that best covers the question's content words (idf-weighted); below
  ANSWER_MIN coverage the reply is ``NOT IN DOCUMENT`` when the prompt asks for that.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from . import normalize, offline_model as om

SUMMARY_SECTIONS = re.compile(r"^(?:\d+[.)]?\s*)?(abstract|summary|executive summary|key findings|"
                              r"overview|highlights)$", re.I)
REFERENCES = re.compile(r"^(?:\d+[.)]?\s*)?(references|bibliography)\b", re.I)
NOT_FOUND = "NOT IN DOCUMENT"
TOPIC_WORDS = 14  # a sentence this short that names the focus introduces its paragraph
ANSWER_MIN = 0.6
# Focus words and the words that count as being about them (stemmed when used).
_SYNONYM_GROUPS = {
    ("challenges", "problems", "difficulties", "obstacles", "risks", "limitations", "barriers"):
        "challenge problem difficult difficulty obstacle limitation limits risk concern "
        "shortage delay delayed struggled warns easy lag complaint criticised overrun cannot",
    ("methods", "methodology", "design"):
        "method measured sample randomly recorded collected selected analysed recruited assigned "
        "design survey counted tested placed",
    ("results", "findings", "outcomes"):
        "results found findings rose fell increased reduced lower higher",
    ("costs", "money", "budget", "finances"):
        "cost price euros dollars pounds spending spent budget pay paid",
    ("safety",): "safety safe injuries killed danger risk",
}
_FIGURE = re.compile(r"\d|\b(?:two|three|four|five|six|seven|eight|nine|ten|twelve|twenty|half|third|quarter)\b", re.I)
_MONEY = re.compile(r"\b(percent|per cent|%|euros?|dollars?|pounds?|billion|million|revenue|margin|"
                    r"profit|cost|sales|growth|price|debt|dividend|share|savings?)\b", re.I)
_FINDING = re.compile(r"\b(rose|fell|increased?|reduced?|lower|higher|fewer|more than|less|"
                      r"kept|retained|gained|saves?|improved?|doubled?|cut|grew|dropped|declined)\b", re.I)
_PARENS = re.compile(r"\s*\([^()]*\)")
_CLAUSE = re.compile(r"(?:;\s+|,\s+(?=(?:and|but|while|which|whereas|so|although|because)\b))")
_GENERIC_Q = {"much", "many", "long", "often", "how", "mentioned", "mentions", "document", "say", "says", "said", "mention", "mentions", "paper", "tell", "report",
              "article", "manual", "policy", "according", "state", "states", "write", "writes",
              "author", "authors", "anything", "information", "something", "study", "trial", "research",
              "work", "report", "findings", "results"}


@dataclass(frozen=True)
class Markers:
    audience: str = ""
    format: str = ""
    focus: str = ""
    question: str = ""
    strict: bool = False  # the prompt asks for NOT IN DOCUMENT when the answer is missing

    @property
    def any(self) -> bool:
        return bool(self.audience or self.format or self.focus)


def read_markers(system: str) -> Markers:
    def get(name: str) -> str:
        return (om._marker(system, name) or "").strip()
    return Markers(audience=get("AUDIENCE").lower(), format=get("FORMAT").lower(),
                   focus=get("FOCUS").lower(), question=get("QUESTION"),
                   strict=NOT_FOUND in system)


# -- the document as sections ------------------------------------------------------------------

def sections(text: str) -> list[tuple[str, list[str]]]:
    """(heading, sentences of one paragraph) in order; a section with several paragraphs
    gives several entries; the part before the first heading has heading ''."""
    out: list[tuple[str, list[str]]] = []
    heading, body = "", []

    def flush() -> None:
        for para in re.split(r"\n\s*\n", "\n".join(body)):
            out.append((heading, om.sentences(para)))

    for line in text.splitlines():
        if om._is_heading(line.strip()):
            flush()
            heading, body = line.strip(), []
        else:
            body.append(line)
    flush()
    return [(h, s) for h, s in out if s]


def _kept(secs: list[tuple[str, list[str]]]) -> list[tuple[str, str, int]]:
    """(heading, sentence, paragraph number) of the sections a summary may use."""
    return [(h, s, p) for p, (h, ss) in enumerate(secs) if not om.DROP_SECTIONS.match(h) for s in ss]


_IRREGULAR = {"kept": "keep", "grew": "grow", "rose": "rise", "fell": "fall", "paid": "pay",
              "spent": "spend", "bought": "buy", "took": "take", "made": "make", "found": "find"}


def stem(word: str) -> str:
    w = _IRREGULAR.get(word.lower(), word.lower()).strip("'-")
    for suf in ("ations", "ation", "ings", "ing", "ers", "er", "ed", "es", "s", "ly"):
        if w.endswith(suf) and len(w) - len(suf) >= 3:
            w = w[: -len(suf)]
            break
    if w.endswith("e") and len(w) > 4:  # produce/produced, measure/measured
        w = w[:-1]
    return w[:7]


def stems(text: str) -> set[str]:
    return {stem(w) for w in om._content_words(text)}


# -- choosing sentences -------------------------------------------------------------------------

def _pick(cands: list[str], n: int, bonus: list[float] | None = None,
          only_positive: bool = False, by_rank: bool = False) -> list[str]:
    """Best ``n`` of ``cands`` by base score (+ ``bonus``), near-duplicates skipped, in
    document order (``by_rank``: best first)."""
    base = dict((i, s) for s, i in om.ranked(cands))
    bonus = bonus or [0.0] * len(cands)
    order = sorted(range(len(cands)), key=lambda i: (-(base[i] + bonus[i]), i))
    chosen: list[int] = []
    for i in order:
        if only_positive and bonus[i] <= 0:
            continue
        ws = set(om._content_words(cands[i]))
        if any(om._overlap(ws, set(om._content_words(cands[j]))) > 0.5 for j in chosen):
            continue
        chosen.append(i)
        if len(chosen) == n:
            break
    return [cands[i] for i in (chosen if by_rank else sorted(chosen))]


def _synonyms() -> dict[str, set[str]]:
    table: dict[str, set[str]] = {}
    for keys, words in _SYNONYM_GROUPS.items():
        group = {stem(w) for w in words.split()}
        for k in keys:
            table[stem(k)] = group | {stem(k)}
    return table


def _focus_stems(focus: str) -> set[str]:
    table = _synonyms()
    out: set[str] = set()
    for s in stems(focus):
        out |= table.get(s, set()) | {s}
    return out


def _focus_bonus(items: list[tuple[str, str, int]], focus: str) -> list[float]:
    """Own focus words, half those of a short topic sentence earlier in its paragraph (a
    paragraph after "The project ran into several problems." is about them), and a
    matching section heading."""
    doc_words = {w for heading, sent, _ in items for w in om._content_words(f"{heading} {sent}")}
    focus = " ".join(sorted(normalize.nearest(om._content_words(normalize.fold_text(focus)), doc_words)))
    fs = _focus_stems(focus)
    own = stems(focus)
    hits = [min(1.0, len(stems(sent) & fs) / max(1, min(3, len(fs)))) for _, sent, _ in items]
    bonus = []
    for i, (heading, _, para) in enumerate(items):
        rest = max((hits[j] for j, it in enumerate(items[:i]) if it[2] == para
                    and len(it[1].split()) <= TOPIC_WORDS), default=0.0)
        head = 1.0 if stems(heading) & (fs | own) else 0.0
        bonus.append(hits[i] + 0.5 * rest + head)
    return bonus


def simplify(sentence: str, child: bool) -> str:
    """No parentheses; for a child also no clause after the first long one."""
    s = _PARENS.sub("", sentence).strip()
    if child and len(s.split()) > 16:
        parts = _CLAUSE.split(s, maxsplit=1)
        if len(parts) == 2 and len(parts[0].split()) >= 6:
            s = parts[0].rstrip(" ,;") + "."
    return s


def choose(text: str, m: Markers, by_rank: bool = False) -> list[str]:
    """The sentences a summary (or post) under markers ``m`` is built from."""
    secs = sections(text)
    kept = _kept(secs)
    if not kept:
        return []
    fmt = m.format
    n = 1 if "one sentence" in fmt or "single sentence" in fmt else 4 if ("bullet" in fmt or "key" in fmt
                                                                          or "list" in fmt) else 3
    child = bool(re.search(r"year-old|child|kid", m.audience))
    investors = bool(re.search(r"investor|shareholder", m.audience))
    if m.focus:
        bonus = _focus_bonus(kept, m.focus)
        cands = [s for _, s, _ in kept]
        picks = _pick(cands, n, bonus, only_positive=True, by_rank=by_rank) if any(b > 0 for b in bonus) else []
        if not picks:
            picks = _pick(cands, n, by_rank=by_rank)
    elif investors:
        cands = [s for _, s, _ in kept]
        bonus = [(0.6 if _FIGURE.search(s) else 0.0) + 0.3 * min(2, len(_MONEY.findall(s))) for s in cands]
        picks = _pick(cands, n, bonus, by_rank=by_rank)
    else:
        summary = [s for h, s, _ in kept if SUMMARY_SECTIONS.match(h)]
        cands = summary if len(summary) >= 3 else [s for _, s, _ in kept]
        # findings first: a figure and a verb of change mark a result, not background
        key_points = "key" in m.format  # key points: the facts with figures
        bonus = [(0.4 if key_points else 0.15) * bool(_FIGURE.search(s)) + (0.25 if _FINDING.search(s) else 0.0)
                 for s in cands]
        if child:
            bonus = [b - 0.04 * max(0, len(simplify(s, True).split()) - 14) for b, s in zip(bonus, cands)]
        picks = _pick(cands, n, bonus, by_rank=by_rank)
    if child or m.audience:
        picks = [simplify(s, child) for s in picks]
    return picks


def render(picks: list[str], m: Markers) -> str:
    if "bullet" in m.format or "key" in m.format or "list" in m.format:
        return "\n".join(f"- {s}" for s in picks)
    return " ".join(picks)


def summarize(text: str, m: Markers) -> str:
    picks = choose(text, m)
    if not picks:
        return om.summarize(text)
    return render(picks, m)


# -- answering a question -----------------------------------------------------------------------

#: Stop words long enough that a typo of one is told apart from a real word ("uder" -> "under").
_LONG_STOP = tuple(sorted(w for w in om.STOP if len(w) >= 4))


def _question_stems(question: str, sents: list[str]) -> set[str]:
    """The question's content stems, read as meant: a word one typo from a document word is
    that word (at the word, then at the stem level), one a typo of a stop word is dropped."""
    doc_words = {w for s in sents for w in om._content_words(s)}
    words = [w for w in om._content_words(normalize.fold_text(question))
             if w in doc_words or not any(normalize.one_typo(w, s) for s in _LONG_STOP)]
    asked = {stem(w) for w in normalize.nearest(words, doc_words) if w not in _GENERIC_Q}
    return normalize.nearest(asked, {stem(w) for w in doc_words})


def answer(text: str, m: Markers) -> str:
    """The best-matching sentence, or NOT_FOUND when nothing covers the question well enough
    and the prompt asks for that (``m.strict``)."""
    secs = [(h, ss) for h, ss in sections(text) if not REFERENCES.match(h)]
    sents = [s for _, ss in secs for s in ss]
    doc_words = {w for s in sents for w in om._content_words(s)}
    q = _question_stems(m.question, sents)
    if not sents or not q:
        return NOT_FOUND if m.strict else (sents[0] if sents else NOT_FOUND)
    sent_stems = [stems(s) for s in sents]
    n = len(sents)
    weight = {w: math.log(1 + n / max(1, sum(1 for ss in sent_stems if w in ss))) for w in q}
    total = sum(weight.values())
    best, best_i = -1.0, 0
    for i, ss in enumerate(sent_stems):
        cov = sum(weight[w] for w in q & ss) / total
        if cov > best + 1e-9:
            best, best_i = cov, i
    if best < ANSWER_MIN and m.strict:
        return NOT_FOUND
    return sents[best_i]


# -- posts ---------------------------------------------------------------------------------------

def write_post(text: str, url: str, title: str, platform: str, limit: int | None, m: Markers) -> str:
    """Like offline_model.write_post, with the body chosen under the markers."""
    limit = limit or om.PLATFORM_LIMITS.get(platform, 1000)
    picks = choose(text, m, by_rank=True)
    if not picks:
        return om.write_post(text, url, title, platform, limit)
    if not m.any:
        picks = picks[:1]  # no instruction: headline and one key point, as before
    bullets = "bullet" in m.format or "key" in m.format or "list" in m.format
    tag = om._hashtag(text)
    tail = f"\n\nSource: {url}"
    head = (title or "New document").strip()
    room = limit - len(tail)
    if platform == "twitter":
        picks = picks[:2 if bullets else 1]
    while True:
        body = "\n".join(f"- {p}" for p in picks) if bullets else " ".join(picks)
        if len(head) + 2 + len(body) + 1 + len(tag) <= room or len(picks) == 1:
            break
        picks = picks[:-1]
    if len(head) + 2 + len(body) + 1 + len(tag) > room:
        head = om._cut(head, max(20, room // 4))
        body = om._cut(body, max(10, room - len(head) - 3 - len(tag)))
    post = f"{head}\n\n{body} {tag}{tail}"
    return post if len(post) <= limit else om._cut(post, limit)
