"""lingua's answers kept between runs (checks/langmemo.py): the same text gets its earlier
answer without lingua, a run whose last run found every text kept loads nothing ahead, and what
another run wrote meanwhile is merged, never lost."""

from __future__ import annotations

import json

import pytest

from harness.checks import form, langmemo


@pytest.fixture(autouse=True)
def fresh_memo():
    langmemo.use(None)
    yield
    langmemo.use(None)


def test_an_answer_comes_back_from_the_memo_without_lingua(tmp_path, monkeypatch):
    langmemo.use(tmp_path)
    assert langmemo.needs_detector()  # nothing on record: load ahead
    first = form.detect_language("Bonjour, comment allez-vous aujourd'hui ?")
    assert first[0] == "fr" and langmemo.counts() == {"hits": 0, "misses": 1}
    langmemo.save()
    langmemo.use(None)
    langmemo.use(tmp_path)  # the next run
    assert langmemo.needs_detector()  # the last run had a new text: load ahead
    monkeypatch.setattr(form, "_detector", lambda: pytest.fail("lingua asked again"))
    assert form.detect_language("Bonjour, comment allez-vous aujourd'hui ?") == first
    assert langmemo.counts() == {"hits": 1, "misses": 0}
    langmemo.save()
    langmemo.use(None)
    langmemo.use(tmp_path)  # a run after one that found every text kept
    assert not langmemo.needs_detector()
    # the twin: a new text asks lingua
    with pytest.raises(pytest.fail.Exception):
        form.detect_language("Guten Morgen, wie geht es Ihnen heute?")


def test_the_detector_is_loaded_ahead_unless_the_last_run_found_every_text(tmp_path):
    path = tmp_path / langmemo.FILE
    path.parent.mkdir(parents=True)
    key = langmemo._detector_key()
    for misses, needed in ((3, True), (0, False)):
        path.write_text(json.dumps({"key": key, "last_run_misses": misses, "entries": {}}))
        langmemo.use(None)
        langmemo.use(tmp_path)
        assert langmemo.needs_detector() is needed
    # another lingua, or languages told apart: the memo is not used at all
    path.write_text(json.dumps({"key": "lingua-0.0:en", "last_run_misses": 0, "entries": {"x": ["en", 1.0]}}))
    langmemo.use(None)
    langmemo.use(tmp_path)
    assert langmemo.needs_detector() and langmemo._state["entries"] == {}


@pytest.mark.parametrize("body", ["not json", "[]", '{"key": 1}', '{"entries": {"a": ["en"]}}'])
def test_an_unreadable_memo_is_ignored(tmp_path, body):
    (tmp_path / "language").mkdir()
    (tmp_path / langmemo.FILE).write_text(body)
    langmemo.use(tmp_path)
    assert langmemo.get("hello there friend") is None and langmemo.needs_detector()


def test_save_merges_what_another_run_wrote_and_keeps_this_runs_answers_first(tmp_path, monkeypatch):
    langmemo.use(tmp_path)
    langmemo.put("text one", ("en", 0.9))
    other_key = langmemo._digest("text of another run")
    langmemo.save()
    body = json.loads((tmp_path / langmemo.FILE).read_text())
    body["entries"][other_key] = ["de", 0.8]  # another run wrote meanwhile
    (tmp_path / langmemo.FILE).write_text(json.dumps(body))
    langmemo.put("text two", ("es", 0.7))
    monkeypatch.setattr(langmemo, "MEMO_TEXTS", 2)
    langmemo.save()
    kept = json.loads((tmp_path / langmemo.FILE).read_text())["entries"]
    assert set(kept) == {langmemo._digest("text one"), langmemo._digest("text two")}  # this run's first
    monkeypatch.setattr(langmemo, "MEMO_TEXTS", 10)
    langmemo.save()
    kept = json.loads((tmp_path / langmemo.FILE).read_text())["entries"]
    assert kept[langmemo._digest("text two")] == ["es", 0.7]


def test_work_unlike_a_nightly_keeps_the_last_record(tmp_path):
    langmemo.use(tmp_path)
    langmemo.get("a nightly's reply")  # a miss
    langmemo.put("a nightly's reply", ("en", 0.9))
    langmemo.save()
    langmemo.use(None)
    langmemo.use(tmp_path)
    assert langmemo.get("a nightly's reply") == ("en", 0.9)
    langmemo.save()  # a nightly whose every text was kept
    langmemo.use(None)
    langmemo.use(tmp_path)
    assert not langmemo.needs_detector()
    langmemo.get("a seeded regression's reply")  # calibrate: a miss, not recorded
    langmemo.put("a seeded regression's reply", ("en", 0.8))
    langmemo.save(record=False)
    langmemo.use(None)
    langmemo.use(tmp_path)
    assert not langmemo.needs_detector() and langmemo.get("a seeded regression's reply") == ("en", 0.8)
    langmemo.save(record=True)  # its twin: a nightly with the miss would have said so
    langmemo.use(None)
    langmemo.use(tmp_path)
    langmemo.get("another new reply")
    langmemo.save()
    langmemo.use(None)
    langmemo.use(tmp_path)
    assert langmemo.needs_detector()
