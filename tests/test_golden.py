"""Golden answers: loading, validation errors (exit 2, naming the file and the fix), version."""

from __future__ import annotations

import pytest

from harness.errors import FixtureErrors
from harness.golden import load_goldens

GOOD = "case: tweet\nanswers:\n  - {text: 'The trial cut symptoms by 30%.', author: human, approved: 2026-11-30}\n"


def test_loads_version_and_answers(tmp_path):
    (tmp_path / "VERSION").write_text("2026.11.30-1\n")
    (tmp_path / "tweet.yaml").write_text(GOOD)
    g = load_goldens(tmp_path)
    assert g.version == "2026.11.30-1"
    assert g.get("tweet").answers[0].author == "human" and g.get("missing") is None


def test_no_folder_is_an_empty_set(tmp_path):
    assert load_goldens(tmp_path / "nope").version == "none"


@pytest.mark.parametrize("name,text,needle", [
    ("tweet.yaml", "case: tweet\nanswers: []\n", "1 to 3 answers"),
    ("tweet.yaml", "case: other\nanswers:\n  - {text: a, author: human, approved: 2026-01-01}\n", "does not match"),
    ("tweet.yaml", "case: tweet\nanswers:\n  - {text: a, author: robot, approved: 2026-01-01}\n", "author must be"),
    ("tweet.yaml", "case: tweet\nanswers:\n  - {text: a, author: human}\n", "lacks approved"),
    ("tweet.yaml", "case: tweet\nanswers:\n  - {text: a, author: human, approved: yesterday}\n", "YYYY-MM-DD"),
    ("tweet.yaml", "case: tweet\nanswers:\n  - {text: a, author: human, approved: 2026-05-01, expires: 2026-01-01}\n",
     "before approved"),
    ("tweet.yaml", "case: tweet\nanswers:\n  - {text: '', author: human, approved: 2026-01-01}\n", "non-empty"),
    ("tweet.yaml", "case: tweet\nanswers: [\n", "YAML syntax"),
    ("tweet.yaml", "case: tweet\nanswers:\n" + "  - {text: a, author: human, approved: 2026-01-01}\n" * 4, "1 to 3"),
    ("VERSION", "one\ntwo\n", "single line"),
])
def test_bad_golden_files_are_fixture_errors(tmp_path, name, text, needle):
    (tmp_path / name).write_text(text)
    with pytest.raises(FixtureErrors) as err:
        load_goldens(tmp_path)
    assert needle in str(err.value) and name in str(err.value)
    assert err.value.exit_code == 2 and "fix:" in str(err.value)
