"""similarity.contrast: a reply closer to a negative reference than to its golden fails, with both scores."""

import asyncio

from harness.cases import load_cases
from harness.checks import REGISTRY
from harness.checks.similarity import below_default_without_reason

validate = REGISTRY["similarity"].validate
from harness.judges.evaluate import judge
from harness.judges.run import JudgeOptions, make_services
from tests.judges.test_judges_run import GOLDENS, setup


def test_contrast_fails_a_reply_nearer_another_answer_and_says_both_scores(tmp_path):
    config = setup(tmp_path)
    case = {c.id: c for c in load_cases(tmp_path / "fixtures")}["q-funder"]
    services = make_services(config, JudgeOptions(out=tmp_path / "o"))

    async def go():
        right = await judge(case, 0, "The document says: " + GOLDENS["q-funder"], "", services)
        wrong = await judge(case, 0, "The document says: " + GOLDENS["q-effect"], "", services)
        await services.aclose()
        return right, wrong

    right, wrong = asyncio.run(go())
    sim_right = next(e for e in right.evidence if e.check == "similarity")
    sim_wrong = next(e for e in wrong.evidence if e.check == "similarity")
    assert sim_right.passed is True and "contrast:" in sim_right.reason
    assert sim_wrong.passed is False and "q-effect" in sim_wrong.reason and "vs" in sim_wrong.reason


def test_validator_and_reason_rule():
    assert validate({"min": 0.6, "contrast": ["a"], "margin": 0.05, "reason": "measured"}) is None
    assert validate({"contrast": []}) and validate({"reason": ""}) and validate({"margin": 2})
    assert below_default_without_reason({"min": 0.6}) and not below_default_without_reason({"min": 0.6, "reason": "x"})
    assert not below_default_without_reason({"min": 0.8})


def test_every_bundled_threshold_below_the_default_has_a_reason():
    from pathlib import Path

    from harness.judges.warnings import mutation_warnings

    cases = load_cases(Path(__file__).resolve().parents[2] / "fixtures", layers=["reasoning"])
    assert [w for w in mutation_warnings(cases) if "without a reason" in w] == []


def test_a_delivery_receipt_is_no_part_of_the_answer(tmp_path):
    from harness.models.claims import content_text

    text = "Summary of the report:\n- Revenue up 14 percent\n\nYour LinkedIn post was sent to the channel."
    assert content_text(text) == "Summary of the report:\n- Revenue up 14 percent"
    assert content_text("Your post was sent.") == "Your post was sent."  # nothing else: the text as it is
    # a sentence about the document that starts like one stays
    assert content_text("Your message was unclear, so here is the summary.") == \
        "Your message was unclear, so here is the summary."
    config = setup(tmp_path)
    case = {c.id: c for c in load_cases(tmp_path / "fixtures")}["q-funder"]
    services = make_services(config, JudgeOptions(out=tmp_path / "o"))

    async def go():
        bare = await judge(case, 0, "The document says: " + GOLDENS["q-funder"], "", services)
        receipt = await judge(case, 0, "The document says: " + GOLDENS["q-funder"]
                              + "\nYour Twitter post was sent to the channel.", "", services)
        await services.aclose()
        return bare, receipt

    bare, receipt = asyncio.run(go())
    score = [next(e for e in v.evidence if e.check == "similarity").score for v in (bare, receipt)]
    assert score[0] == score[1]
