"""Tonight's reply beside the accepted one, grouped by kind of change (report/changes.py), in
report.html, summary.md and the PR comment; a reply that carries a script stays inert text."""

from __future__ import annotations

import html.parser
import json

import pytest

from harness.report.changes import Change, baseline_changes, claim_diff, group_of
from harness.report.marks import Mark, excerpt, mark_spans
from harness.report.github import render_github
from harness.report.html import render_html
from harness.report.markdown import render_summary

XSS = "<script>alert('pwned')</script>"


def ev(check, passed, turn=0, expected="", observed="", reason="", availability="ready", score=None):
    return {"check": check, "turn": turn, "availability": availability, "passed": passed, "score": score,
            "expected": expected, "observed": observed, "reason": reason, "evaluator": f"{check}@1",
            "source": "real"}


def case(cid, status, evidence, replies, *, layer="reasoning", baseline=None):
    """A case whose turn i replied ``replies[i]`` (a list of message texts)."""
    d = {"id": cid, "layer": layer, "channel": "telegram", "status": status, "attempts": 1, "evidence": evidence,
         "latency_ms": 100.0, "llm_calls": 1, "tokens": {"input": 10, "output": 5}, "cost_usd": 0.0,
         "turns": [{"index": i, "sent": "summarize", "sent_at": 1.0, "delivery_status": 200,
                    "replies": [{"text": t, "at": 1.5, "method": "sendMessage", "kind": "text"} for t in msgs]}
                   for i, msgs in enumerate(replies)]}
    if baseline is not None:
        d["baseline"] = baseline
    return d


def results(cases, run_id="20240105-020000-eeee"):
    return {"schema": "harness.results/1", "run_id": run_id, "summary": {"planned": len(cases), "verdict": "fail"},
            "layers": {}, "cases": cases}


def number_change(turn, before, after, claim_before="", claim_after=""):
    return {"turn": turn, "kind": "number", "change": "contradicted", "expected": before, "observed": after,
            "claim_expected": claim_before, "claim_observed": claim_after}


@pytest.fixture
def tonight():
    return results([
        # the learner's block: changes and the accepted text (docs/CASES.md "Baseline checks")
        case("num-one", "fail", [ev("reply.regex", True), ev("baseline.facts", False, expected="15%",
                                                             observed="20%", reason="a number changed")],
             [["Sales rose 20% in 2024."]],
             baseline={"turns": [{"index": 0, "text": "Sales rose 15% in 2024."}],
                       "changes": [number_change(0, "15%", "20%")]}),
        # two turns with a number changed each, and the replies split: once per group
        case("num-two", "fail", [ev("baseline.facts", False, 0), ev("baseline.facts", False, 1),
                                 ev("baseline.replies", False, 1, "1 reply (3 of 3 nights)", "3 replies")],
             [["It costs 12 euros."], ["Part one: 40 km.", "Part two.", "Part three."]],
             baseline={"turns": [{"index": 0, "text": "It costs 21 euros."}, {"index": 1, "text": "One: 4 km."}],
                       "changes": [number_change(0, "21 euros", "12 euros"), number_change(1, "4 km", "40 km"),
                                   {"turn": 1, "kind": "replies", "change": "changed",
                                    "expected": "1 reply (3 of 3 nights)", "observed": "3 replies"}]}),
        # no block: the change is read from the evidence, the accepted reply from the base run
        case("split", "fail", [ev("baseline.replies", False, 0, "1 reply (3 of 3 nights)", "2 replies")],
             [["First half", "second half"]], layer="cost"),
        # soft: a hedge of every accepted night is missing; the reply carries a script
        case("hedge", "soft", [ev("baseline.facts", None, 0, "may reduce", "", "fact dropped", score=0.65)],
             [[f"Remote work reduces costs {XSS}"]],
             baseline={"turns": [{"index": 0, "text": f"Remote work may reduce costs {XSS}"}],
                       "changes": [{"turn": 0, "kind": "hedge", "change": "dropped", "expected": "may reduce",
                                    "observed": "", "claim_expected": "", "claim_observed": ""}]}),
        # not shown: baseline evidence that passed, or could not be gathered
        case("held", "pass", [ev("baseline.facts", True)], [["fine"]]),
        case("unknown", "unavailable", [ev("baseline.facts", None, availability="unavailable")], [["fine"]]),
        case("other", "fail", [ev("reply.regex", False)], [["no"]]),
    ])


@pytest.fixture
def base():
    return results([case("split", "pass", [], [["Whole answer in one message."]], layer="cost")],
                   run_id="20240101-020000-aaaa")


def test_groups_are_by_kind_largest_first_each_case_once(tonight, base):
    groups = baseline_changes(tonight, base)
    assert [(g.key, g.heading) for g in groups] == [
        ("number", "2 cases: a number changed"),
        ("split", "2 cases: replies split into more messages"),
        ("dropped", "1 case: a fact of every accepted night is missing"),
    ]
    number = groups[0]
    assert [cc.id for cc in number.cases] == ["num-one", "num-two"]
    two = number.cases[1]
    assert [p.turn for p in two.pairs] == [0, 1] and len(two.changes) == 2
    assert two.pairs[1].tonight == ("Part one: 40 km.", "Part two.", "Part three.")
    assert two.pairs[1].baseline == ("One: 4 km.",)
    split = {cc.id: cc for cc in groups[1].cases}
    assert split["split"].pairs[0].baseline == ("Whole answer in one message.",)  # from the base run
    assert split["split"].changes[0].kind == "replies"
    # without the base run, the accepted reply is not known (never made up)
    assert baseline_changes(tonight)[1].cases[-1].pairs[0].baseline is None


@pytest.mark.parametrize("change, group", [
    (Change(0, "replies", "changed", "1 reply (3 of 3 nights)", "3 replies"), "split"),
    (Change(0, "replies", "changed", "2..3 replies", "1 reply"), "merged"),
    (Change(0, "replies", "changed", "text, photo", "text"), "replies"),  # kinds, not the count
    (Change(0, "replies", "changed", "1 reply", "1 reply"), "replies"),
    (Change(0, "number", "contradicted", "15%", "20%"), "number"),
    (Change(0, "number", "dropped", "15%", ""), "dropped"),
    (Change(0, "name", "new", "", "Alice"), "new"),
    (Change(None, "latency", "changed", "<= 4000ms", "6100ms"), "latency"),
])
def test_group_of(change, group):
    assert group_of(change) == group


@pytest.mark.parametrize("text, marks, want", [
    ("rose 20% in 2024", ["20%"], [("rose ", False), ("20%", True), (" in 2024", False)]),
    ("20 and 2024 and 120", ["20"], [("20", True), (" and 2024 and 120", False)]),  # whole numbers only
    ("It MAY reduce", ["may reduce"], [("It ", False), ("MAY reduce", True)]),
    ("abc", ["zzz"], [("abc", False)]),
    ("a b c", ["a b", "b c"], [("a b c", True)]),  # overlaps merge
    ("", ["x"], [("", False)]),
])
def test_mark_spans(text, marks, want):
    assert mark_spans(text, marks) == want


def test_excerpt_keeps_the_first_mark_in_view():
    text = "word " * 200 + "the 42 here " + "tail " * 200
    pieces = excerpt(text, ["42"], limit=80)
    joined = "".join(seg for seg, _ in pieces)
    assert len(joined) <= 82 and joined.startswith("…") and joined.endswith("…")
    assert ("42", True) in pieces


class _Scripts(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.scripts, self.marks, self.headings, self._in = [], [], [], None

    def handle_starttag(self, tag, attrs):
        self._in = tag
        if tag == "script":
            self.scripts.append("")

    def handle_endtag(self, tag):
        self._in = None

    def handle_data(self, data):
        if self._in == "script":
            self.scripts[-1] += data
        elif self._in == "mark":
            self.marks.append(data)
        elif self._in == "h3":
            self.headings.append(data)


def test_report_html_puts_the_replies_side_by_side_marked_and_inert(tonight, base):
    from harness.report.html import SCRIPT

    page = render_html(tonight, base=base)
    parsed = _Scripts()
    parsed.feed(page)
    assert parsed.scripts == [SCRIPT]  # the page's own filter, nothing from a reply
    assert "<script>alert(" not in page and "&lt;script&gt;alert(&#x27;pwned&#x27;)&lt;/script&gt;" in page
    for heading in ("2 cases: a number changed", "2 cases: replies split into more messages",
                    "1 case: a fact of every accepted night is missing"):
        assert heading in parsed.headings
    assert {"15%", "20%", "21 euros", "12 euros", "4 km", "40 km", "may reduce"} <= set(parsed.marks)
    section = page[page.index('id="changes"'):page.index("<h2>Layers</h2>")]
    assert section.count('href="#case-num-two"') == 2  # under "number" and under "split", once each
    assert "held" not in section and "case-unknown" not in section and "case-other" not in section
    assert "3 messages" in section and "Whole answer in one message." in section
    # the case's own drill-down carries the same comparison
    drill = page[page.index('id="case-num-one"'):]
    assert "Against the baseline" in drill[:drill.index("</details>")]


def test_report_html_without_changes_has_no_section(base):
    page = render_html(results([case("held", "pass", [ev("baseline.facts", True)], [["ok"]])]), base=base)
    assert 'id="changes"' not in page


def test_summary_md_lists_each_group_with_both_replies_escaped(tonight, base):
    text = render_summary(tonight, base=base)
    assert "### Changed against the baseline (4 cases)" in text
    assert "#### 2 cases: a number changed" in text and "#### 2 cases: replies split into more messages" in text
    assert "**20%**" in text and "**15%**" in text and "**may reduce**" in text
    assert "<script>" not in text and "&lt;script&gt;" in text
    assert "accepted: Whole answer in one message." in text
    assert "tonight: (2 messages) First half ⏎ second half" in text
    block = text[text.index("#### 2 cases: a number changed"):text.index("#### 2 cases: replies split")]
    assert block.count("`num-two`") == 1


def test_github_summary_lists_the_groups_within_its_budget(tonight, base):
    text = render_github(tonight, base=base)
    assert "**Changed against the baseline**: 4 case(s)" in text
    assert "<details><summary>2 cases: a number changed</summary>" in text
    assert "`num-one`" in text and "<script>" not in text
    many = results([case(f"c{i}", "fail", [ev("baseline.facts", False, 0, "1", "2")], [["x " * 3000 + "2"]],
                         baseline={"turns": [{"index": 0, "text": "x " * 3000 + "1"}],
                                   "changes": [number_change(0, "1", "2")]}) for i in range(400)])
    big = render_github(many)
    assert len(big) <= 60_000 and "400 cases: a number changed" in big


def test_render_finds_the_accepted_reply_through_the_baseline(tmp_path, monkeypatch):
    """report RUN --format html|md: the base comes from the reports folder (nights_around),
    with a case accepted on its own from a later run taking its reply from that run."""
    from harness.night.baseline import accept_baseline
    from harness.night.context import nights_around
    from harness.night.history import LocalRunSource
    from harness.report import render

    reports = tmp_path / "reports"

    def save(d):
        folder = reports / d["run_id"]
        folder.mkdir(parents=True)
        (folder / "results.json").write_text(json.dumps(d), encoding="utf-8")
        return folder

    save(results([case("a", "pass", [], [["A says 10."]]), case("b", "pass", [], [["B says 1."]])],
                 "20240101-020000-aaaa"))
    save(results([case("a", "pass", [], [["A says 11."]]), case("b", "pass", [], [["B says 2."]])],
                 "20240102-020000-bbbb"))
    tonight_dir = save(results([
        case("a", "fail", [ev("baseline.facts", False, 0, "10", "12", "a number changed")], [["A says 12."]]),
        case("b", "fail", [ev("baseline.facts", False, 0, "2", "3", "a number changed")], [["B says 3."]],
             baseline={"turns": [{"index": 0, "text": "B says 1 (a copy from before b was accepted)."}]}),
    ], "20240103-020000-cccc"))
    monkeypatch.setenv("USER", "tester")
    source = LocalRunSource(reports)
    accept_baseline(reports, source, "20240101-020000-aaaa")
    accept_baseline(reports, source, "20240102-020000-bbbb", "B now says 2", cases=["b"])
    page = render(tonight_dir, "html", context=nights_around).read_text(encoding="utf-8")
    assert "<mark>10</mark>" in page and "<mark>12</mark>" in page  # a: the baseline run's reply
    assert "B says <mark>2</mark>." in page and "accepted on its own from 20240102-020000-bbbb" in page
    summary = render(tonight_dir, "md", context=nights_around).read_text(encoding="utf-8")
    assert "accepted: A says **10**." in summary and "accepted: B says **2**." in summary
    assert "b <- 20240102-020000-bbbb by tester" in summary.replace("&lt;", "<")


def test_the_learners_copy_fills_in_and_leads_only_without_the_accepted_baseline():
    tonight = results([case("a", "fail", [ev("baseline.facts", False, 0, "1", "2")], [["two"], ["x"]],
                            baseline={"turns": [{"index": 0, "text": "copy of one"}]})])
    before = results([case("a", "pass", [], [["run before: one"]])])
    assert baseline_changes(tonight, before)[0].cases[0].pairs[0].baseline == ("copy of one",)
    accepted = {**before, "baseline_record": {"run_id": "x"}}
    assert baseline_changes(tonight, accepted)[0].cases[0].pairs[0].baseline == ("run before: one",)
    assert baseline_changes(tonight, None)[0].cases[0].pairs[0].baseline == ("copy of one",)


@pytest.mark.parametrize("before, after, left, right", [
    ("Sodium-ion batteries could lower the cost.", "Sodium-ion batteries lowers the cost.", (2, 3), (2,)),
    ("to protect about 11,000 homes", "to protect 11,000 homes", (2,), ()),           # a hedge removed
    ("Prices rose 15% in 2024.", "Prices rose 20% in 2024.", (2,), (2,)),
    ("Prices rose 15%.", "prices ROSE 15%", (), ()),                                  # case and punctuation blind
    ("Oslo had more rain than Bergen last year.", "Bergen had more rain than Oslo last year.",
     (0, 5), (0, 5)),                                                                 # a name swap
])
def test_claim_diff(before, after, left, right):
    assert claim_diff(before, after) == (left, right)


def test_a_claim_marks_only_its_changed_words_across_line_breaks():
    text = "Summary of the paper:\nIn brief, Sodium-ion batteries could\nlower the cost. Could is elsewhere."
    claim = "In brief, Sodium-ion batteries could lower the cost."
    left, _ = claim_diff(claim, "Overall, Sodium-ion batteries lowers the cost.")
    spans = mark_spans(text, [Mark(claim, left)])
    assert [seg for seg, marked in spans if marked] == ["In brief,", "could\nlower"]
    assert mark_spans(text, [Mark(claim)])[1] == (claim.replace("could lower", "could\nlower"), True)


def test_the_learners_real_hedge_change_is_marked_in_both_replies():
    """The shape night/learned.py writes for a removed hedge (expected/observed are words about
    the hedge, the claims carry the text): the changed words are marked, even in a long reply."""
    lead = "Summary of A Manganese-Rich Layered Oxide Cathode Gives Sodium-Ion Batteries a Long Cycle Life:\n"
    tail = " We estimate the cost of the cathode material at 38 dollars per kilowatt-hour." * 5
    before = "In brief, Sodium-ion batteries could lower the cost of stationary energy storage because sodium is cheap."
    after = "Overall, Sodium-ion batteries lowers the cost of stationary energy storage because sodium is cheap."
    d = results([case("bat", "fail", [ev("baseline.facts", False, 0, "4 claim(s) and their facts", "…",
                                         "contradicts the accepted nights: hedge 'hedged on every night' -> "
                                         "'stated without a hedge'")],
                      [[lead + after + tail]],
                      baseline={"turns": [{"index": 0, "text": lead + before + tail}],
                                "changes": [{"turn": 0, "kind": "hedge", "change": "contradicted",
                                             "expected": "hedged on every night", "observed": "stated without a hedge",
                                             "claim_expected": before, "claim_observed": after}]})])
    (group,) = baseline_changes(d)
    pair = group.cases[0].pairs[0]
    assert [s for s, m in pair.spans(pair.baseline[0], "baseline") if m] == ["In brief,", "could lower"]
    assert [s for s, m in pair.spans(pair.tonight[0], "tonight") if m] == ["Overall,", "lowers"]
    shown = excerpt(pair.tonight[0], pair.mark_tonight, limit=120)
    assert ("lowers", True) in shown and len("".join(s for s, _ in shown)) <= 122
    text = render_summary(d)
    assert "**could lower**" in text and "**lowers**" in text


def test_a_side_with_nothing_marked_still_shows_its_claim():
    """A hedge removed: tonight's claim lost a word, so nothing is marked on tonight's side; its
    excerpt is still placed on the claim, not on the reply's first line."""
    tonight_text = "Intro line. " * 60 + "It saves 310 euros a year." + " More." * 60
    d = results([case("h", "fail", [ev("baseline.facts", False)], [[tonight_text]],
                      baseline={"turns": [{"index": 0, "text": "It saves about 310 euros a year."}],
                                "changes": [{"turn": 0, "kind": "hedge", "change": "contradicted",
                                             "expected": "hedged on every night", "observed": "stated without a hedge",
                                             "claim_expected": "It saves about 310 euros a year.",
                                             "claim_observed": "It saves 310 euros a year."}] * 3})])
    (group,) = baseline_changes(d)
    pair = group.cases[0].pairs[0]
    assert [s for s, m in pair.spans(pair.baseline[0], "baseline") if m] == ["about"]
    assert not any(m for _, m in pair.spans(pair.tonight[0], "tonight"))
    shown = "".join(s for s, _ in excerpt(pair.tonight[0], pair.mark_tonight, limit=100))
    assert "It saves 310 euros a year." in shown
    text = render_summary(d)
    assert text.count("`hedged on every night` → `stated without a hedge` ×3") == 1


def test_a_malformed_changes_block_costs_only_its_section(tmp_path):
    d = results([case("x", "fail", [ev("baseline.facts", False)], [["t"]],
                      baseline={"turns": [{"index": 0, "text": "t"}], "changes": [{"kind": "number", "turn": [1]}]})])
    page = render_html(d)  # a turn that is a list: not drawn, and nothing else lost
    assert "Cases (1), by layer" in page
    bad = results([case("x", "fail", [ev("baseline.facts", False)], [["t"]],
                        baseline={"turns": "not a list", "changes": "nor this"})])
    assert "Cases (1), by layer" in render_html(bad) and "### By layer" in render_summary(bad)


def test_render_takes_a_context_of_two_or_three(tmp_path):
    from harness.report import render

    folder = tmp_path / "r" / "20240105-020000-eeee"
    folder.mkdir(parents=True)
    d = results([case("split", "fail", [ev("baseline.replies", False, 0, "1 reply", "2 replies")], [["a", "b"]])])
    (folder / "results.json").write_text(json.dumps(d), encoding="utf-8")
    two = render(folder, "md", context=lambda res, reports: ([], None)).read_text(encoding="utf-8")
    assert "accepted: not known here" in two
    base = results([case("split", "pass", [], [["ab"]])])
    three = render(folder, "md", context=lambda res, reports: ([], None, base)).read_text(encoding="utf-8")
    assert "accepted: ab" in three


def test_the_run_ends_on_one_line_about_the_changes(tonight, base):
    from harness.report.changes import changes_line

    assert changes_line(baseline_changes(tonight, base)) == (
        "changed against the baseline: 4 cases (2: a number changed; 2: replies split into more messages; "
        "1: a fact of every accepted night is missing)")
    assert changes_line([]) == ""
