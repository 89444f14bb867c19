"""The suite as ``harness judges`` sees it: judged cases, their goldens, frames and mutations.

A case is judged when one of its turns has a ``similarity`` check whose golden exists (a
reasoning case with goldens, or a multi-turn case with reference answers). Its mutations:

- number / polarity / entity / omission: derived from each golden answer (``mutate``);
- substitution: another case's golden on the same document, and a golden of a case about
  another document (same task type when there is one), in this case's frame;
- stale: the reply to the request before this one, repeated: in a multi-turn case the
  previous turn's reference answer; otherwise the previous case on the same document (as if
  the user had asked it first), verbatim in its own frame; and after a document switch, the
  previous document's answer under this document's title (this case's frame);
- format (cases with length or bullet constraints): the post or reply over its length limit,
  bullet lines joined into prose.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from harness.judges import mutate as M
from harness.judges import mutate_names as N
from harness.schema.frames import Frame, frame_of, platform_in, title_of
from harness.schema.files import InputProblem
from harness.schema.yamlload import load_file as load_yaml, strip_lines
from harness.types import Case


@dataclass(frozen=True)
class Subject:
    """One judged case: where its answer goes and what it is compared with."""

    case: Case
    turn: int
    golden_id: str
    answers: tuple[str, ...]
    frame: Frame
    title: str
    platform: str
    document: str
    """The source document's text ('' when the case names none)."""
    keys: tuple[str, ...] = ()
    """Strings that carry the case's key fact (from its contains / regex / expected answer)."""
    key_tiers: tuple[tuple[str, ...], ...] = ()
    """The same strings by strength (``key_tiers``): contains, regex alternatives, the expected
    answer's number, rubric ``about`` hints; the omission mutator reads a tier only when no
    sentence holds a key of the tiers before."""
    restated: tuple[str, ...] = ()
    """Markers of a refusal said in other words (unanswerable cases): the omission drops them too."""
    previous: tuple[str, str] | None = None
    """A multi-turn case's previous turn reply and post (reference answer), if any."""

    @property
    def source(self) -> str:
        return self.case.source

    def render(self, answer: str, frame: Frame | None = None, title: str | None = None) -> tuple[str, str]:
        return (frame or self.frame).render(answer, title=self.title if title is None else title,
                                            platform=self.platform, source=self.source)


@dataclass(frozen=True)
class Mutation:
    case: str
    kind: str
    sub: str
    answer: int
    """The golden answer it came from (-1: not derived from one)."""
    detail: str
    reply: str
    post: str

    @property
    def label(self) -> str:
        origin = f" (answer #{self.answer})" if self.answer >= 0 else ""
        return f"{self.sub}{origin}: {self.detail}"


def raw_frames(case_files: set[str]) -> dict[str, dict]:
    """``judges:`` tables by case id, read from the case files (defaults applied)."""
    out: dict[str, dict] = {}
    for file in sorted(case_files):
        try:  # read with the suite's loader (the case loader has refused a hostile file already)
            data = strip_lines(load_yaml(file)) or {}
        except InputProblem:
            continue
        default = (data.get("defaults") or {}).get("judges")
        for raw in data.get("cases") or []:
            if isinstance(raw, dict) and "id" in raw:
                frame = raw.get("judges", default)
                if frame:
                    out[raw["id"]] = frame
    return out


def _similarity_spec(case: Case) -> tuple[int, dict] | None:
    for i, turn in enumerate(case.turns):
        for spec in turn.checks:
            if spec.name == "similarity":
                return i, (spec.params or {})
    return None


_LITERAL = re.compile(r"[A-Za-z0-9][A-Za-z0-9 ,.'-]{2,}")


def key_tiers(case: Case, turn: int) -> tuple[tuple[str, ...], ...]:
    """What carries the key fact, strongest first: (contains strings; literal alternatives of a
    content regex; the first number of critic.answer's expected answer; the alternatives of
    critic.rubric's ``about`` hints). A contains string must be there; a regex alternative is a
    phrase the case accepts; a bare number or a rubric hint is a weaker clue."""
    strong: list[str] = []
    regex: list[str] = []
    numbers: list[str] = []
    about: list[str] = []
    for spec in case.turns[turn].checks:
        p = spec.params
        if spec.name.endswith((".contains", ".contains_all")):
            strong.extend([p] if isinstance(p, str) else list(p))
        elif spec.name.endswith(".regex") and isinstance(p, str):
            body = re.sub(r"\(\?[a-z]+\)", "", p)
            if body.startswith("^") or "\\n" in body or "(?m)" in p:
                m = re.search(r"\.\*\(([^()]*)\)", body)
                if not m:
                    continue
                body = m.group(1)
            for alt in body.split("|"):
                alt = alt.replace("\\", "").strip("()^$ ")
                if _LITERAL.fullmatch(alt) and alt.lower() not in ("source:",):
                    regex.append(alt)
        elif spec.name == "critic.answer" and isinstance(p, dict):
            numbers.extend(M.NUMBER.findall(p.get("expected", ""))[:1])
        elif spec.name == "critic.rubric" and isinstance(p, dict):
            for hint in p.get("about") or []:
                about.extend(a.strip() for a in str(hint).split("|") if len(a.strip()) >= 3)

    def clean(keys: list[str]) -> tuple[str, ...]:
        return tuple(k for k in keys if k and k != "Source:")
    return clean(strong), clean(regex), clean(numbers), clean(about)


def key_strings(case: Case, turn: int) -> tuple[str, ...]:
    """What carries the key fact: contains strings, literal alternatives of a content regex,
    and the numbers of critic.answer's expected answer (``key_tiers`` without the rubric hints)."""
    strong, regex, numbers, _ = key_tiers(case, turn)
    return strong + regex + numbers


REFUSAL_MARKERS = ("n't", " not ", "never", "nothing", "nowhere", " no ")
"""A refusal said in other words ("isn't answered anywhere", "never discusses")."""


def uses_post(case: Case, turn: int) -> bool:
    return any(s.name.startswith("post.") or (isinstance(s.params, dict) and s.params.get("of") == "post")
               for s in case.turns[turn].checks)


def subjects(cases: list[Case], goldens, read_source) -> tuple[list[Subject], list[str]]:
    """Judged cases in suite order, and notes on the ones left out."""
    frames = raw_frames({c.file for c in cases if c.file})
    out: list[Subject] = []
    notes: list[str] = []
    for case in cases:
        spec = _similarity_spec(case)
        if spec is None:
            continue
        turn, params = spec
        golden_id = params.get("golden") or case.id
        golden = goldens.get(golden_id)
        if golden is None:
            notes.append(f"{case.id}: no golden {golden_id!r}, not judged")
            continue
        if golden_id != case.id:
            notes.append(f"{case.id}: shares golden {golden_id!r} (judged with that case's mutations too)")
        document = ""
        if case.source:
            try:
                document = read_source(case.source)
            except (OSError, ValueError) as exc:
                notes.append(f"{case.id}: source {case.source!r} unreadable ({exc}); entity mutations skipped")
        send = case.turns[turn].send or ""
        out.append(Subject(case=case, turn=turn, golden_id=golden_id,
                           answers=tuple(a.text for a in golden.answers), frame=frame_of(frames.get(case.id),
                                                                                            uses_post(case, turn)),
                           title=title_of(document), platform=platform_in(send), document=document,
                           keys=key_strings(case, turn), key_tiers=key_tiers(case, turn),
                           restated=REFUSAL_MARKERS if "unanswerable" in case.tags else ()))
    return out, notes


def _limits(case: Case, turn: int) -> dict[str, int]:
    out = {}
    for spec in case.turns[turn].checks:
        if spec.name in ("reply.max_chars", "post.max_chars") and isinstance(spec.params, int):
            out[spec.name.split(".")[0]] = spec.params
    return out


def _wants_bullets(case: Case, turn: int) -> bool:
    for spec in case.turns[turn].checks:
        if spec.name.endswith(".bullets"):
            return True
        if spec.name.endswith(".regex") and isinstance(spec.params, str) and "^- " in spec.params:
            return True
    return False


def _task(case: Case) -> tuple[str, ...]:
    """Tags that say what kind of answer the case wants (question, platform, audience, format)."""
    return tuple(sorted(t for t in case.tags if t in ("question", "answerable", "unanswerable", "twitter", "linkedin",
                                                        "facebook", "instagram", "whatsapp") or
                        t.startswith(("audience-", "format-", "focus"))))


def _alike(candidates: list[Subject], case: Case) -> list[Subject]:
    """Candidates for the same task as ``case``. A refusal stays right whatever document it
    came from (an equivalent mutant, not a wrong answer), so an unanswerable case is given
    another document's real answer instead."""
    if "unanswerable" in case.tags:
        answers = [s for s in candidates if "unanswerable" not in s.case.tags]
        return answers or candidates
    return [s for s in candidates if _task(s.case) == _task(case)] or candidates


def mutations(subject: Subject, everyone: list[Subject], seed: int) -> list[Mutation]:
    """Every mutation of one judged case, deterministic for a seed."""
    case = subject.case
    out: list[Mutation] = []
    proper = N.proper_words(subject.document) if subject.document else None
    doc_names = N.document_names(subject.document) if subject.document else []
    aliases = N.head_names(subject.document) if subject.document else set()

    def add(kind: str, sub: str, index: int, result, frame=None, title=None) -> None:
        if result is None:
            return
        text, detail = result
        if not text.strip():
            return
        reply, post = subject.render(text, frame, title)
        out.append(Mutation(case.id, kind, sub, index, detail, reply, post))

    for i, answer in enumerate(subject.answers):
        r = lambda kind: M.rng(seed, case.id, i, kind)  # noqa: E731
        add("number", "digit", i, M.number_digit(answer, r("digit")))
        add("number", "scale", i, M.number_scale(answer, r("scale")))
        add("number", "swap", i, M.number_swap(answer, r("swap")))
        add("polarity", "flip", i, M.polarity_flip(answer, r("flip")))
        add("polarity", "negation", i, M.polarity_negation(answer, r("negation")))
        add("entity", "swap", i, N.entity_swap(answer, r("entity-swap"), proper))
        first = N.entity_replace(answer, r("entity-replace"), doc_names, proper, aliases)
        add("entity", "replace", i, first)
        second = N.entity_replace(answer, r("entity-replace-2"), doc_names, proper, aliases)  # another name, or
        if second is not None and first is not None and second[0] != first[0]:  # another replacement for it
            add("entity", "replace", i, second)
        add("omission", "key-fact", i, M.omission(answer, *(subject.key_tiers or (subject.keys,)),
                                                  restated=subject.restated))
        limits = _limits(case, subject.turn)
        if limits:
            filler = [s for s in M.sentences(subject.document) if 40 < len(s) < 300][:60] or [answer]
            where, limit = sorted(limits.items())[0]
            grown = M.too_long(answer, limit, filler)
            add("format", f"too-long-{where}", i, grown)
        if _wants_bullets(case, subject.turn):
            add("format", "bullets-removed", i, M.bullets_removed(answer))

    # substitution: another case's golden, same document / another document
    same_doc = [s for s in everyone if s.case.id != case.id and s.golden_id != subject.golden_id
                and s.source and s.source == subject.source]
    other_doc = [s for s in everyone if s.source != subject.source and s.golden_id != subject.golden_id]
    r = M.rng(seed, case.id, "substitution")
    if same_doc:
        pick = r.choice(same_doc)
        add("substitution", "same-document", -1, (pick.answers[0], f"the golden of {pick.case.id}"))
    if other_doc:
        pick = r.choice(_alike(other_doc, case))
        add("substitution", "other-document", -1, (pick.answers[0], f"the golden of {pick.case.id} ({pick.source})"))

    # stale: the previous request's reply again
    if subject.previous is not None:
        reply, post = subject.previous
        out.append(Mutation(case.id, "stale", "previous-turn", -1, "the previous turn's reference answer", reply, post))
    else:
        order = [s for s in everyone if s.source == subject.source]
        k = next((j for j, s in enumerate(order) if s.case.id == case.id), 0)
        before = [s for s in order[:k][::-1] + order[k + 1:][::-1] if s.golden_id != subject.golden_id]
        if before:
            prev = before[0]
            reply, post = prev.render(prev.answers[0])
            out.append(Mutation(case.id, "stale", "previous-answer", -1,
                                f"the reply to the request before ({prev.case.id}) repeated verbatim", reply, post))
        docs = []
        for s in everyone:  # documents in suite order; the one before this case's
            if s.source and s.source not in docs:
                docs.append(s.source)
        if subject.source in docs and len(docs) > 1:
            old_doc = docs[docs.index(subject.source) - 1]
            olds = [s for s in everyone if s.source == old_doc and s.golden_id != subject.golden_id]
            old = _alike(olds, case)[0] if olds else None
        else:
            old = None
        if old is not None:
            add("stale", "old-document", -1, (old.answers[0], f"{old.case.id}'s answer ({old_doc}) under "
                                                              f"this document's title"))
    return out
