"""The redactor's quick checks (harness/redact.py): what decides that a text needs no full pass.

They must never say "nothing here" where the full pattern finds something (a secret would stay
in clear), and should say it for what every report holds (the ``basics@1`` evaluator, "tokens",
"passed", HTML attributes), or the whole results.json goes through the full pattern every run
(issue 26: the speed bench's report files took 0.3-0.8 s of a 2-3 s run).
"""

from __future__ import annotations

import random

import pytest

from harness.redact import (_FIELD_NAMES, _FIELD_NAMES_REVERSED, _QUERY_NAME, _QUERY_NAME_REVERSED, Redactor,
                            _field_names_in)

#: Letters of the names in both cases, the characters Python's case-insensitive matching folds
#: onto them (KELVIN SIGN, LONG S, DOTLESS I, I WITH DOT), and what the patterns match around them.
ALPHABET = list("keyKEYtoknTOKNsecrtSECRTpawdPAWDigIGuhUHlvVLxXzZ0189_.-=:\"' \t\n&?#") + ["\u212a", "\u017f",
                                                                                          "\u0131", "\u0130"]
WORDS = ["key", "token", "secret", "pass", "pwd", "sig", "auth", "credential", "session", "verifier", "private",
         "password", "passwd", "api_key", "api-key", "apikey", "private_key", "authorization", "\u212aey",
         "\u017fecret", "pr\u0131vate", "TOKEN", "Authorization"]


def corpus(n: int = 4000) -> list[str]:
    rng = random.Random(26)
    out = []
    glue = ["=", ":", " = ", '": ', "'=", "\t:", "_x=", ".v-1=", "", " ", "&"]
    for _ in range(n):
        parts = [rng.choice(WORDS) if rng.random() < 0.4 else rng.choice(glue) if rng.random() < 0.5
                 else "".join(rng.choices(ALPHABET, k=rng.randint(0, 4))) for _ in range(rng.randint(1, 6))]
        out.append("".join(parts))
    return out


@pytest.mark.parametrize("forward, backward", [(_QUERY_NAME, _QUERY_NAME_REVERSED),
                                               (_FIELD_NAMES, _FIELD_NAMES_REVERSED)])
def test_the_reversed_patterns_find_what_the_plain_ones_find(forward, backward):
    texts = corpus()
    found = [bool(forward.search(t)) for t in texts]
    assert 300 < sum(found) < len(texts) - 300  # the corpus has both, plenty of each
    assert [bool(backward.search(t[::-1])) for t in texts] == found


@pytest.mark.parametrize("text, found", [
    ('{"api_key": "abc"}', True), ("password = x", True), ("Authorization:Bearer x", True), ("TOKEN='x'", True),
    ("\u212aey: 1", False),  # KELVIN SIGN then "ey": "api" is missing: not a field name
    ('{"tokens": 5, "passed": true}', False), ("token count: none", False), ("secrets are kept", False),
])
def test_field_names_in(text, found):
    assert _field_names_in(text) is found
    assert (_FIELD_NAMES.search(text) is not None) is found


@pytest.mark.parametrize("text, may", [
    # every shape's example must get the full pass (secrets would stay in clear otherwise)
    ("Authorization: Bearer abc.def-ghi_jkl", True),
    ("Authorization: Basic dXNlcjpodW50ZXIyaHVudGVyMg==", True),
    ("header bearer\tabcdefgh", True),
    ("key sk-proj-abcdefghijklmnop1234 in a 401", True),
    ("https://api.telegram.org/bot123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsawx/getMe", True),
    ("aws AKIAIOSFODNN7EXAMPLE here", True),
    ("GET /v1/x?api_key=supersecretvalue1&y=2", True),
    ("GET /v1/x?\u212aey=supersecretvalue1", True),  # case folding: KELVIN SIGN is a k
    ("token ghp_abcdefghijklmnopqrstuvwxyz0123456789", True),
    ("xoxb-1234567890-abc", True),
    ("postgres://user:hunter2@db/x", True),
    # what every report holds: no full pass
    ('"evaluator": "basics@1", "reason": "1 message(s) checked"', False),
    ('{"tokens": 5, "passed": true, "session": null}', False),
    ('<div class="case" data-id="x">a nearer, wearer fact</div>', False),
    ("Bearers of news: a Basic-income plan", False),
])
def test_may_match(text, may):
    r = Redactor({})
    assert r._may_match(text) is may
    if not may:  # sound: the full pattern finds nothing there either
        assert r._re.search(text) is None and r.text(text) == text


def test_a_report_with_no_secret_is_written_without_the_full_pass(monkeypatch):
    r = Redactor({"bot_token": "123456:abcdefghijklmnopqrstuvwxyzABCDEFGHI"})
    report = {"cases": [{"id": f"c{i}", "evidence": [{"evaluator": "basics@1", "reason": "ok", "passed": True}],
                         "tokens": {"in": 1}} for i in range(50)]}
    calls = []
    real_data = r._data

    def full_pass(value, *args, **kwargs):  # the per-string pass of the full pattern
        calls.append("data")
        return real_data(value, *args, **kwargs)

    monkeypatch.setattr(r, "_data", full_pass)
    assert r.data(report) == report
    assert r.text(str(report)) == str(report)
    assert calls == []
    # its twin, with the bot's token in one reply: the full pass runs, the token is gone
    report["cases"][7]["evidence"][0]["reason"] = "sent 123456:abcdefghijklmnopqrstuvwxyzABCDEFGHI"
    out = r.data(report)
    assert "abcdefghijklmnopqrstuvwxyzABCDEFGHI" not in str(out) and calls


#: One example of each default shape, and near misses of them, for the corpus below.
SHAPE_BITS = ["Bearer abc.def-ghi_jkl", "bearer\tabcdefgh", "sk-proj-abcdefghijklmnop1234", "task-followup-now-for-x",
              "bot123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsawx", "12345:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsawx",
              "AKIAIOSFODNN7EXAMPLE", "ghp_abcdefghijklmnopqrstuvwxyz0123456789", "xoxb-1234567890-abc",
              "?api_key=supersecretvalue1&y=2", "#token=abcdefgh", "postgres://user:hunter2@db/x", "https://a@b",
              "Basic dXNlcjpodW50ZXIyaHVudGVyMg==", "Basic features", "eyJhbGciOiJI.eyJzdWIiOiIx.abcdefghijk",
              "-----BEGIN RSA PRIVATE KEY-----\nMIIabc\n-----END RSA PRIVATE KEY-----", "sk_live_abcdefghijklmnop1234",
              "rk_test_abcdefghijklmnopqr", "AIzaSyA1234567890abcdefghijklmnopqrstu", "harness_test_bot",
              '"password": "hunter2hunter2"', "api_key = 'abcdefghij'", "Authorization: Bearer abcdefghijk",
              "TOKEN=abcdefghijkl", "session_id: abcdefghijkl", "credentials:\n   abcdefghijkl", "xtoken: abcdefghijk",
              "passwd=(abcdefghij)", "\u212aey", "secret  \t= token abcdefghijk"]


def _shape_corpus(n: int = 3000) -> list[str]:
    rng = random.Random(2026)
    filler = ["", " ", "\n", "\0", "-", "x", "ab cd", "=", ":", '"', "/", "@"]
    return ["".join(rng.choice(SHAPE_BITS) if rng.random() < 0.35 else rng.choice(filler) + rng.choice(WORDS)
                    if rng.random() < 0.3 else rng.choice(filler) for _ in range(rng.randint(1, 8)))
            for _ in range(n)]


def test_only_the_shapes_that_may_match_give_the_full_patterns_result():
    """``Redactor.text`` runs only the shapes whose ``_SHAPE_NEEDS`` hold and tries the field
    shape only where a name ends at a ``:``/``=``; the result is the full patterns' one."""
    from harness.redact import _FIELD_RE

    r = Redactor({"bot_token": "123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw1"})
    texts = _shape_corpus()
    changed = 0
    for text in texts:
        full = _FIELD_RE.sub(lambda m: m.group("keep") + "[redacted:secret-field]", r._re.sub(r._replacement, text))
        assert r.text(text) == full, text
        changed += full != text
    assert 1000 < changed < len(texts) - 300  # both kinds, plenty of each
    # and a long text of them all, as a report file is
    long = "\n".join(texts)
    assert len(long) > 4096
    full = _FIELD_RE.sub(lambda m: m.group("keep") + "[redacted:secret-field]", r._re.sub(r._replacement, long))
    assert r.text(long) == full


def test_data_looks_per_string_for_what_the_whole_value_may_hold():
    r = Redactor({"bot_token": "123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw1"})
    texts = _shape_corpus(600)
    value = {"cases": [{"id": f"c{i}", "reply": t, "tags": [t[:5], {"k": t[::-1]}]} for i, t in enumerate(texts)]}
    expected = {"cases": [{"id": f"c{i}", "reply": r.text(t), "tags": [r.text(t[:5]), {"k": r.text(t[::-1])}]}
                          for i, t in enumerate(texts)]}
    assert r.data(value) == expected


def test_the_literals_found_through_their_anchors_are_every_literal_in_the_text():
    """``Redactor._found`` looks only for the literals whose anchor (a shorter literal each of
    them holds) is in the text: the same literals, in the same order, as looking for all."""
    secrets = {"bot_token": "123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw1", "app_secret": "s3cr3t/app+secret=value%x",
               "short": "hunter22", "DB_PASSWORD": "pässwörd-with-ümlauts-and-more-chars"}
    r = Redactor(secrets)
    assert len(r._anchors) < len(r._literals)
    rng = random.Random(7)
    lits = list(r._literals)
    for _ in range(400):
        parts = []
        for _ in range(rng.randint(1, 4)):
            lit = rng.choice(lits)
            a, b = sorted(rng.sample(range(len(lit) + 1), 2))
            parts.append(lit[a:b] if rng.random() < 0.5 else lit)  # whole literals and cut pieces
            parts.append(rng.choice(["", " ", "\n", "x"]))
        text = "".join(parts)
        assert r._found(text) == tuple(lit for lit in lits if lit in text), text
