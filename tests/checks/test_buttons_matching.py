"""`buttons:` matching (issue 16): `contains` is a substring of a label (case ignored), like
`reply.contains` on text; `exact` is a whole label."""

from __future__ import annotations

import pytest

from harness.checks import REGISTRY
from harness.checks import REGISTRY

buttons_error = REGISTRY["buttons"].validate
from tests.checks.test_multiturn_checks import ev, obs, reply, run, tobs

LABELS = ("📅 Book an appointment", "Cancel")


@pytest.mark.parametrize("params, passed", [
    ({"contains": ["Book an appointment"]}, True),      # the emoji prefix no longer hides it
    ({"contains": ["book an APPOINTMENT"]}, True),      # case ignored
    ({"contains": ["appointment", "cancel"]}, True),
    ({"contains": ["Reschedule"]}, False),
    ({"exact": ["📅 Book an appointment"]}, True),
    ({"exact": ["Book an appointment"]}, False),         # whole labels only
    ({"exact": ["cancel"]}, False),                      # case counts
    ({"contains": ["Cancel"], "exact": ["📅 Book an appointment"], "min": 2}, True),
    ({"min": 3}, False),
])
def test_contains_is_a_substring_exact_is_a_whole_label(params, passed):
    o = obs(tobs(events=[ev("telegram.sendMessage", 2, r=reply("What next?", 2, buttons=LABELS))]))
    e = run("buttons", o, params)
    assert e.passed is passed, e.reason
    if not passed and "exact" in params and params != {"min": 3}:
        assert "no button labelled exactly" in e.reason


@pytest.mark.parametrize("value", [{"exact": 3}, {"contains": [1]}, {"labels": ["x"]}, {}])
def test_bad_parameters_are_fixture_errors(value):
    assert buttons_error(value) is not None
    assert "buttons" in REGISTRY
