"""Metamorphic variants: each kind really changes the request, never a link, placeholder or
number; derived cases compare every varied turn with its original; an agent that reads
keywords literally is caught, one that reads them as a person would is not."""

from __future__ import annotations

import textwrap

import pytest

from harness.cases import load_cases
from harness.checks import REGISTRY
from harness.config import load_config
from harness.errors import FixtureErrors
from harness.layers import variants as V
from harness.run.runner import RunOptions, run_suite
from harness.types import Case, Event, Observation, Reply, Turn, TurnObservation
from tests.agents.echo import TARGET_ENV

REQUEST = "summarize {docs}/paper.pdf for linkedin, focusing on the challenges since 2021"


@pytest.mark.parametrize("kind", list(V.KINDS))
def test_each_kind_changes_the_request_but_no_link_placeholder_or_number(kind):
    out = V.transform(kind, REQUEST, "case-a")
    assert out != REQUEST
    assert "{docs}/paper.pdf" in out and "2021" in out
    assert V.transform(kind, REQUEST, "case-a") == out  # deterministic
    assert out == out.strip()  # the platforms strip leading and trailing whitespace anyway


def test_the_kinds_do_what_they_say():
    t = lambda kind: V.transform(kind, REQUEST, "case-a")  # noqa: E731
    assert t("case").startswith("SUMMARIZE {docs}/paper.pdf FOR LINKEDIN")
    assert t("greeting").endswith(REQUEST)
    assert any(ch in t("lookalike") for ch in V.LOOKALIKES.values())
    assert any(ch in t("accents") for ch in V.ACCENTS.values())
    assert any(ch in t("emoji") for ch in V.EMOJI)
    assert "  " in t("spacing") or t("spacing").endswith(("!!", "...", " !"))
    typo = t("typos")
    assert typo.lower() != REQUEST.lower() and len(typo) in (len(REQUEST), len(REQUEST) - 1, len(REQUEST) - 2)


def _suite(tmp_path, body: str):
    (tmp_path / "multiturn").mkdir(parents=True, exist_ok=True)
    (tmp_path / "multiturn" / "a.yaml").write_text(textwrap.dedent(body))
    return load_cases(tmp_path)


BODY = """
    layer: multiturn
    cases:
      - id: two-turns
        turns:
          - send: "summarize {docs}/paper.pdf for linkedin"
            expect: {replies: {exact: 1}}
          - send: "make it shorter please"
            expect: {reply: {regex: "(?i)shorter"}}
      - id: with-a-fault
        turns:
          - send: "summarize {docs}/paper.pdf"
            fault: {llm: {status: 500}}
            expect: {replies: {min: 1}}
    """


def test_derived_cases_replay_the_conversation_and_compare_each_turn(tmp_path):
    cases = {c.id: c for c in _suite(tmp_path, BODY)}
    derived = [c for c in cases.values() if V.TAG in c.tags]
    assert derived and all(c.layer == "robustness" and c.users == ("original", "variant") for c in derived)
    assert not any(c.id.startswith("with-a-fault--") for c in derived)  # faults are not replayed
    v = derived[0]
    assert [t.user for t in v.turns] == ["original", "original", "variant", "variant"]
    assert [s.params for t in v.turns[2:] for s in t.checks if s.name == "equivalent"] == [
        {"to": 0, "min": V.EQUIVALENT_MIN}, {"to": 1, "min": V.EQUIVALENT_MIN}]
    assert [s.name for s in v.turns[0].checks] == ["replies"]  # the original's reply count, for settling
    assert len(derived) == V.DEFAULT_COUNT


def test_variants_are_chosen_per_case(tmp_path):
    body = BODY.replace("      - id: two-turns\n", "      - id: two-turns\n        variants: [typos, case]\n")
    ids = {c.id for c in _suite(tmp_path, body)}
    assert {"two-turns--typos", "two-turns--case"} <= ids
    none = BODY.replace("      - id: two-turns\n", "      - id: two-turns\n        variants: none\n")
    assert not [i for i in {c.id for c in _suite(tmp_path, none)} if "--" in i]
    bad = BODY.replace("      - id: two-turns\n", "      - id: two-turns\n        variants: [typo]\n")
    with pytest.raises(FixtureErrors, match="unknown variant kind"):
        _suite(tmp_path, bad)


T0 = 1_000_000.0


def _obs(first: list[str], second: list[str], calls=("llm",), calls2=("llm",)) -> Observation:
    def turn(i, texts, calls):
        return TurnObservation(index=i, sent_at=T0, delivery_status=200, delivery_error="",
                               replies=tuple(Reply("telegram", "1", t, T0 + 1, "sendMessage") for t in texts),
                               events=tuple(Event(source="gateway", name=c, at=T0, status=200) for c in calls),
                               settled_after_s=1)
    return Observation(case_id="v", channel="telegram", chat_id="1", turns=(turn(0, first, calls), turn(1, second, calls2)),
                       started_at=T0, finished_at=T0 + 2)


class _Services:
    def get(self, name):
        from harness.models.embedder import hash_embedder

        return hash_embedder()


CASE = Case(id="v", layer="robustness", channel="telegram", turns=(Turn(send="a"), Turn(send="b")))


@pytest.mark.parametrize("first,second,kw,passes", [
    (["Summary of the paper"], ["Summary of the paper"], {}, True),
    (["Summary of the paper"], ["Summary of the paper", "Summary of the paper"], {}, False),  # two replies
    (["Summary of the paper"], ["Summary of the paper"], {"calls2": ()}, False),  # no LLM call
    (["Summary of the paper: sleep rose"], ["Sorry, I did not understand that."], {}, False),
])
async def test_equivalent(first, second, kw, passes):
    e = await REGISTRY["equivalent"].fn(CASE, _obs(first, second, **kw), 1, {"to": 0, "min": 0.85}, _Services())
    assert e.passed is passes, e.reason


def _project(tmp_path, mode: str, layers=("robustness",)):
    """The echo bot's project with one multiturn case that asks for three variants; its cases of
    ``layers`` (all of them for ``()``). tests/run/test_variant_reuse.py uses it too."""
    (tmp_path / "fixtures" / "multiturn").mkdir(parents=True)
    (tmp_path / "fixtures" / "multiturn" / "k.yaml").write_text(textwrap.dedent("""
        layer: multiturn
        cases:
          - id: ask
            variants: [case, greeting, typos]
            send: "summarize it now"
            expect: {reply: {contains: "OK"}}
        """))
    cfg = tmp_path / "harness.toml"
    cfg.write_text('[target]\nname = "echo"\ninprocess = "tests.agents.echo:make_app"\n'
                   '[sandbox]\nsettle_s = 0.2\nreply_timeout_s = 3\n[embeddings]\nbackend = "hash"\n'
                   + TARGET_ENV + f'ECHO_MODE = "{mode}"\n')
    return load_config(cfg, environ={}), load_cases(tmp_path / "fixtures", layers=list(layers))


async def test_an_agent_that_reads_keywords_literally_is_caught(tmp_path):
    config, cases = _project(tmp_path, "keyword")
    report = await run_suite(config, cases, RunOptions(out_dir=tmp_path / "out", concurrency=1))
    status = {c.id: c.status for c in report.cases}
    assert status == {"ask--case": "fail", "ask--greeting": "pass", "ask--typos": "fail"}
    why = next(e for c in report.cases if c.id == "ask--case" for e in c.evidence if e.passed is False)
    assert why.check == "equivalent" and why.turn == 1
    variants = dict(report.layer_metrics["robustness"]["variants"])
    assert sum(variants.pop("comparisons").values()) == 3
    assert variants == {"cases": 3, "passed": 1, "pass_rate": round(1 / 3, 4), "changed": ["ask--case", "ask--typos"]}


# -- what a variant never changes (issue 21) ------------------------------------------------
ALL = list(V.KINDS)


@pytest.mark.parametrize("kind", ALL)
@pytest.mark.parametrize("text, kept", [
    ("/start", ["/start"]),  # a command is left whole, with its arguments
    ("/book@harness_test_bot Friday 19:00", ["/book@harness_test_bot Friday 19:00"]),
    ("/book tomorrow evening please", ["/book tomorrow evening please"]),
    ('please translate "good morning everyone" into german', ['"good morning everyone"']),
    ("summarize the article at example.com/news/today for everyone", ["example.com/news/today"]),
    ("remind me about the meeting with Atlantis tomorrow", ["Atlantis"]),  # a name
    ("compare the iPhone with something cheaper please", ["iPhone"]),
    ("write to support@example.com about the refund", ["support@example.com"]),
    ("book a table for four people at 19:00 tomorrow", ["19:00"]),
    ("please summarise 'the lost city' chapter carefully", ["'the lost city'"]),
])
def test_protected_spans_survive_every_kind(kind, text, kept):
    out = V.transform(kind, text, "case-p")
    for span in kept:
        assert span in out, (kind, out)
    if V.starts_with_command(text):
        assert out == text


@pytest.mark.parametrize("kind", ALL)
def test_words_the_checks_expect_echoed_are_kept(kind):
    text = "atlantis is the place i want to read about tonight"  # sentence-initial: not a name by its capital
    echoed = V.echoed_words(Case(id="e", layer="multiturn", channel="telegram", turns=(
        Turn(send=text, checks=(CheckSpec("reply.contains", "atlantis"),
                                CheckSpec("reply.regex", r"(?i)\btonight\b"))),)))
    assert {"atlantis", "tonight"} <= echoed and "b" not in echoed and "i" not in echoed
    out = V.transform(kind, text, "case-e", echoed)
    assert "atlantis" in out.lower() and "tonight" in out.lower() and "atlantis" in out or kind == "case"
    assert ("ATLANTIS" not in out) and ("TONIGHT" not in out)


def test_without_the_protection_the_same_words_do_change():
    """The right twin: the words above are free words of the kinds when nothing protects them."""
    text = "atlantis is the place i want to read about tonight"
    assert "ATLANTIS" in V.transform("case", text, "case-e")
    assert "ATLANTIS" not in V.transform("case", "remind me of Atlantis", "case-e")


def test_spacing_never_glues_punctuation_to_a_number():
    assert V.transform("spacing", "36", "c") == "36"
    assert not V.transform("spacing", "book a table for 4", "c").endswith(("4!!", "4...", "4 !"))
    assert V.transform("spacing", "book a table please", "c").endswith(("!!", "...", " !"))


def test_a_button_press_is_replayed_on_the_variant_users_own_keyboard(tmp_path):
    body = """
    layer: multiturn
    cases:
      - id: press
        variants: [typos]
        turns:
          - send: "show me the opening hours please"
            expect: {replies: {min: 1}}
          - callback: {data: hours, turn: 0}
            expect: {replies: {min: 1}}
          - send: "this one please"
            reply_to: 1
            expect: {replies: {min: 1}}
    """
    (v,) = [c for c in _suite(tmp_path, body) if c.id == "press--typos"]
    assert [t.kind for t in v.turns] == ["text", "callback", "text"] * 2
    assert v.turns[4].send == "hours" and v.turns[4].options["turn"] == 3 and v.turns[1].options["turn"] == 0
    assert v.turns[5].options["reply_to"] == 4


def test_the_project_switch_and_the_case_that_wins(tmp_path):
    from harness.errors import ConfigError

    cases = lambda setting, body=BODY: [c.id for c in V.derive(  # noqa: E731
        _suite(tmp_path, body.replace("two-turns--", "")), {"sections": {"robustness": {"variants": setting}}})]
    assert cases("none") == []
    assert sorted(cases(["typos", "case"])) == ["two-turns--case", "two-turns--typos"]
    assert sorted(cases("typos,case")) == ["two-turns--case", "two-turns--typos"]  # the environment's form
    assert len(cases("all")) == len(V.KINDS) and len(cases("default")) == V.DEFAULT_COUNT
    own = BODY.replace("      - id: two-turns\n", "      - id: two-turns\n        variants: [spacing]\n")
    assert cases("none", own) == ["two-turns--spacing"]  # the case wins
    for bad in (["typo"], 3, "some"):
        with pytest.raises(ConfigError, match=r"\[robustness\] variants"):
            cases(bad)


def test_variants_all_on_a_case_is_accepted(tmp_path):
    body = BODY.replace("      - id: two-turns\n", "      - id: two-turns\n        variants: all\n")
    assert len([c for c in _suite(tmp_path, body) if c.id.startswith("two-turns--")]) == len(V.KINDS)


# -- the cheap comparison and the embedder's line ----------------------------------------------
from harness.checks.equivalence import normalised  # noqa: E402
from harness.types import CheckSpec  # noqa: E402


@pytest.mark.parametrize("a, b, same", [
    ("Nice to meet you, Atlantis!", "nice to  meet you, ATLANTIS!", True),
    ("Café opens at 12:00", "Cafe opens at 12:00", True),
    ("Booked Friday", "Bооked Friday", True),  # Cyrillic look-alikes folded back
    ("Your id is 1234567", "Your id is 7654321", True),  # each user's own chat id
    ("Booked Friday at 19:00", "Booked Friday at 20:00", False),  # a number is a difference
    ("Nice to meet you, Atlantis!", "Nice to meet you, Atlatis!", False),
    ("Welcome! I book tables.", "Sorry, I only understand /start.", False),
])
def test_normalised(a, b, same):
    assert (normalised(a, ("1234567",)) == normalised(b, ("7654321",))) is same


class _Unloaded:
    """An embedder whose model is not loaded yet (it must not be asked for equal replies)."""

    name, source, loaded = "fake@1", "double", False

    def __init__(self):
        self.calls = 0

    async def embed(self, texts, *, cache=False):
        self.calls += 1
        from harness.models.embedder import _hash_encode

        return _hash_encode(list(texts), 64)


def _services():
    from harness.config import load_config as _load
    from harness.services import Services

    lines: list[str] = []
    emb = _Unloaded()
    s = Services(_load(None, environ={}), factories={"embedder": lambda _s: emb}, say=lines.append)
    return s, emb, lines


async def test_equal_normalised_replies_never_ask_the_embedder():
    s, emb, lines = _services()
    e = await REGISTRY["equivalent"].fn(CASE, _obs(["Nice to meet you, Atlantis!"], ["nice to meet you,  ATLANTIS!"]),
                                        1, {"to": 0}, s)
    assert e.passed is True and "normalised" in e.reason and emb.calls == 0 and lines == []
    assert s.comparisons == {"variant comparisons": [1, 0]}


async def test_the_first_comparison_that_needs_the_model_says_so_once():
    s, emb, lines = _services()
    for _ in range(2):
        await REGISTRY["equivalent"].fn(CASE, _obs(["Summary of the paper"], ["A summary of that paper"]), 1,
                                        {"to": 0}, s)
    assert emb.calls == 2 and len(lines) == 1
    assert lines[0].startswith("loading the embedding model for variant comparisons: 1 of 1 so far differ")


def test_the_layer_counts_how_the_comparisons_were_decided():
    from harness.checks.equivalence import EVAL, decided_by
    from harness.types import Evidence

    def ev(evaluator, availability="ready", reason=""):
        return Evidence(check="equivalent", turn=1, availability=availability, passed=True, evaluator=evaluator,
                        reason=reason)

    assert decided_by([ev(EVAL), ev(EVAL), ev(f"{EVAL}+all-MiniLM"),
                       ev(EVAL, "unavailable", "the embedder is unavailable: OSError"),
                       Evidence(check="replies", turn=1, availability="ready", passed=True, evaluator="x")]) == {
        "without_model": 2, "by_embedder": 2}
    assert decided_by([]) == {"without_model": 0, "by_embedder": 0}
