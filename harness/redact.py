"""One redactor for every artifact and every output of a run.

The redactor knows every secret of the run by value: the sandbox's generated channel
credentials (bot token, webhook secret, app secret, verify token, WhatsApp token), every
variable of the environment and every key of the config (``[target.env]`` above all) named as
a secret (TOKEN, SECRET, PASSWORD, API_KEY, ACCESS_KEY, PRIVATE_KEY, CREDENTIAL in its name), every
variable named by an ``*_env`` key anywhere in the config (critic ``api_key_env``, alert
tokens and URLs, the LLM upstream key), the storage and LLM keys of the environment, and the
alert webhook URL (a webhook URL carries its token). It also knows the common shapes of keys
(``sk-...``, Telegram bot tokens, ``Bearer ...``, AWS access key ids, ``?api_key=`` query
values), so a key the run was never told about is still caught.

Each secret becomes ``[redacted:<name>]`` (the name of its variable or its kind). A secret
shorter than ``MIN_SECRET_LEN`` characters is not redacted by value (it would mangle ordinary
text); its shape may still match.

One object is built per run (``for_config``) and installed (``install``); every sink applies
``active()`` at its single write point: the report writers (``harness.report``), the journal,
the manifest, target.log (``harness.targets.http``), alerts, every uploaded object
(``harness.night.store.S3Store.put``), the console (``RedactingStream`` around stdout and
stderr in ``harness.cli.main``) and the crash log.
"""

from __future__ import annotations

import io
import os
import re
import threading
from typing import Any, Iterable, Mapping
from urllib.parse import quote

#: A value shorter than this is not redacted by value (its shape may still be).
MIN_SECRET_LEN = 8

#: A secret this long is also known by its first and last ``PART_LEN`` characters.
PART_FROM = 24
PART_LEN = 16
#: ... and by every ``WINDOW`` characters of it, one every ``STRIDE``: a piece of it cut anywhere
#: keeps at most ``WINDOW + STRIDE - 2`` characters in clear.
WINDOW = 12
STRIDE = 4

#: Words in an environment variable's name that make its value a secret.
SECRET_NAME_WORDS = ("TOKEN", "SECRET", "PASSWORD", "API_KEY", "ACCESS_KEY", "PRIVATE_KEY", "CREDENTIAL")
#: Variables that hold keys whatever the config says.
WELL_KNOWN = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GROQ_API_KEY", "MISTRAL_API_KEY", "GEMINI_API_KEY",
              "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "HARNESS_LLM_API_KEY",
              "HARNESS_ANTHROPIC_API_KEY")

#: Key shapes: (name, pattern). A pattern's group ``keep``, when present, is kept in clear.
SHAPES: tuple[tuple[str, str], ...] = (
    ("bearer", r"(?P<keep>\b[Bb]earer\s+)[A-Za-z0-9._~+/=-]{8,}"),
    ("sk-key", r"sk-(?<![A-Za-z0-9_-]sk-)[A-Za-z0-9_-]{16,}"),
    ("telegram-token", r"(?:(?<=bot)|(?<![A-Za-z0-9_-]))\d{5,12}:[A-Za-z0-9_-]{35}(?![A-Za-z0-9_-])"),
    ("aws-key", r"(?<![A-Z0-9])(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Z0-9])"),
    ("github-token", r"(?<![A-Za-z0-9_])gh[pousr]_[A-Za-z0-9]{30,}"),
    ("slack-token", r"(?<![A-Za-z0-9_-])xox[abposr]-[A-Za-z0-9-]{10,}"),
    ("query-key", r"(?P<keep>[?&;#](?:[A-Za-z0-9_.-]*?(?i:key|token|secret|passw(?:or)?d|pwd|pass|sig|signature|auth"
                  r"|credential|session|code_verifier|private)[A-Za-z0-9_.-]*)=)[^&\s\"'<>#]{4,}"),
    ("url-password", r"(?P<keep>\b[A-Za-z][A-Za-z0-9+.-]{1,20}://[^\s/@:\"'<>]*:)[^\s/@\"'<>]+(?=@)"),
    ("basic-auth", r"(?P<keep>\b[Bb]asic\s+)[A-Za-z0-9+/]{8,}={0,2}"),
    # (each starts with its literal and looks behind after it: a leading lookbehind is tried at
    # every position of the text and made the whole pattern half again slower)
    ("jwt", r"eyJ(?<![A-Za-z0-9_-]eyJ)[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),
    ("private-key", r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|$)"),
    ("stripe-key", r"[sr]k(?<![A-Za-z0-9_][sr]k)_(?:live|test)_[A-Za-z0-9]{16,}"),
    ("google-api-key", r"AIza(?<![0-9A-Za-z_-]AIza)[0-9A-Za-z_-]{35}(?![0-9A-Za-z_-])"),
)


#: A header, JSON field, TOML/YAML key or shell assignment named as a secret: its value
#: (``[redacted:secret-field]``). Its own pass, only where its names occur (``_FIELD_NAMES``):
#: in the one pattern of ``SHAPES`` it slowed every redaction by half.
FIELD_SHAPE = ("secret-field",
               r"(?P<keep>(?i:(?:passw(?:or)?d|secret|api[_-]?key|apikey|(?<![A-Za-z])token|access[_-]?key"
               r"|private[_-]?key|credentials?|session[_-]?(?:id|key)|sessionid|authorization))[\"']?\s*[:=]\s*[\"']?"
               r"(?:(?i:bearer|basic|token|bot)\s+)?)(?>[^\s\"'&,;<>()\[\]{}]{8,})(?![(\[{])")
_FIELD_RE = re.compile(FIELD_SHAPE[1])
_FIELD_NAMES = re.compile(r"(?i:passw(?:or)?d|secret|api[_-]?key|apikey|token|access[_-]?key|private[_-]?key"
                          r"|credentials?|session[_-]?(?:id|key)|sessionid|authorization)[\"']?\s*[:=]")
#: ``_FIELD_NAMES`` read backwards, searched in the reversed text (``_field_names_in``): the same
#: matches (no lookaround, no anchor), but it starts at a ``:`` or ``=`` instead of trying the
#: names at every character (results.json, 530 KB: 21 ms -> 4 ms). Keep the two in step
#: (tests/test_redact_prefilter.py checks they agree).
_FIELD_NAMES_REVERSED = re.compile(r"[:=]\s*[\"']?(?i:d(?:ro)?wssap|terces|yek[_-]?ipa|yekipa|nekot"
                                   r"|yek[_-]?ssecca|yek[_-]?etavirp|s?laitnederc|(?:di|yek)[_-]?noisses|dinoisses"
                                   r"|noitazirohtua)")


def _field_names_in(s: str) -> bool:
    """``_FIELD_NAMES.search(s)`` is not None, faster."""
    return _FIELD_NAMES_REVERSED.search(s[::-1]) is not None


def _field_sub(s: str) -> str:
    """``_FIELD_RE.sub`` (the secret-field shape), tried only where a field name ends at a ``:``
    or ``=``: ``_FIELD_NAMES_REVERSED`` finds each such colon in the reversed text (none hides in
    another's match: a match holds one ``:``/``=``, its first character) and where its name
    starts, the only place a match of ``_FIELD_RE`` ending there can start. The same result as
    the plain ``sub`` (tests/test_redact_prefilter.py), without trying the case-insensitive names
    at every character (results.json, 4.6 MB: 1.0 s -> a few ms)."""
    if not _field_names_in(s):
        return s
    n = len(s)
    starts = sorted(n - m.end() for m in _FIELD_NAMES_REVERSED.finditer(s[::-1]))
    out: list[str] = []
    last = 0
    for start in starts:
        if start < last:
            continue
        m = _FIELD_RE.match(s, start)
        if m is None:
            continue
        out += [s[last:start], m.group("keep"), "[redacted:secret-field]"]
        last = m.end()
    return "".join(out) + s[last:] if out else s


#: query-key's name and ``=``: ``_QUERY_NAME`` (the plain form) read backwards, searched in the
#: reversed text: it starts at an ``=`` instead of trying the names at every character
#: (results.json, 530 KB: 43 ms -> 0.3 ms); tests/test_redact_prefilter.py checks they agree.
_QUERY_NAME = re.compile(r"(?i:key|token|secret|pass|pwd|sig|auth|credential|session|verifier|private)"
                         r"[A-Za-z0-9_.-]*=")
_QUERY_NAME_REVERSED = re.compile(r"=[A-Za-z0-9_.-]*(?i:yek|nekot|terces|ssap|dwp|gis|htua|laitnederc|noisses"
                                  r"|reifirev|etavirp)")
_TELEGRAM_TAIL = re.compile(r":[A-Za-z0-9_-]{35}")


def _telegram_tail_in(s: str) -> bool:
    for m in _TELEGRAM_TAIL.finditer(s):  # telegram-token: 5+ digits, ':', 35 token characters
        i = m.start()
        if i >= 5 and s[i - 5:i].isdecimal():  # isdecimal is exactly what \d matches
            return True
    return False


#: Per default shape (by name), what a text must hold for that shape to match anywhere in it
#: (a necessary condition, cheap on long text): ``Redactor.text`` runs only the shapes whose
#: condition holds (a rendered report.html of 3 MB holds "task-" and so "sk-": the whole pattern
#: over it took 2 s, the one shape a few ms). Keep in step with ``SHAPES``. A pattern each ...
_NEED_PATTERNS: dict[str, str] = {
    "bearer": r"[Bb]earer\s", "sk-key": r"sk-[A-Za-z0-9_-]{16}", "aws-key": r"AKIA|ASIA",
    "github-token": r"gh[pousr]_", "slack-token": r"xox[abposr]-", "url-password": r"://[^\s/@]*@",
    "basic-auth": r"[Bb]asic\s", "jwt": r"eyJ", "private-key": r"PRIVATE KEY", "stripe-key": r"_live_|_test_",
    "google-api-key": r"AIza",
}
#: ... or a function (telegram-token: five digits before its tail; query-key: its name read backwards).
_NEED_FUNCS: dict[str, Any] = {
    "telegram-token": _telegram_tail_in,
    "query-key": lambda s: "=" in s and _QUERY_NAME_REVERSED.search(s[::-1]) is not None,
}


def _searches(pattern: str):
    rx = re.compile(pattern)
    return lambda s: rx.search(s) is not None


_SHAPE_NEEDS: dict[str, Any] = {**{name: _searches(p) for name, p in _NEED_PATTERNS.items()}, **_NEED_FUNCS}
#: Every pattern of ``_NEED_PATTERNS`` in one: one search decides for a short text that none holds.
_ANY_NEED = re.compile("|".join(_NEED_PATTERNS.values()))
#: Below this length ``_ANY_NEED``'s one search is the faster; above it, the substring searches.
_ONE_SEARCH_BELOW = 4096


def _forms(value: str) -> tuple[str, ...]:
    """Every form a secret takes in an artifact: as is, URL-encoded (query, path), JSON-escaped
    (a ``"`` or ``\\`` in it, or non-ASCII written as ``\\uXXXX``), HTML-escaped, and base64
    (as an ``Authorization: Basic`` value or a header of its own carries it), hex."""
    import html
    import json

    from urllib.parse import quote_plus

    encoded = [quote(value, safe=""), quote(value, safe="/:"), quote(value, safe="/:@"), quote_plus(value)]
    escaped = [json.dumps(value)[1:-1], json.dumps(value, ensure_ascii=False)[1:-1]]
    forms = [value, *encoded, *(re.sub(r"%[0-9A-F]{2}", lambda m: m.group(0).lower(), e) for e in encoded),
             *escaped, *(json.dumps(e, ensure_ascii=False)[1:-1] for e in escaped),  # JSON inside JSON
             repr(value)[1:-1],  # an error message's {value!r}
             html.escape(value), html.escape(value, quote=False),
             html.escape(json.dumps(value, ensure_ascii=False)[1:-1])]
    forms.append(escaped[0].replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e"))  # Go's JSON
    raw = value.encode("utf-8")
    forms += [*_base64_forms(value), raw.hex(), raw.hex().upper()]
    return tuple(f for f in dict.fromkeys(forms) if len(f) >= MIN_SECRET_LEN)


def _base64_forms(value: str) -> list[str]:
    """The secret base64-encoded (standard and URL-safe alphabets), alone, and inside a longer
    text (``user:<secret>`` in a Basic header or a docker config's "auth"): at each of the three
    offsets the secret can start at, the part of the encoding that only its own bytes decide."""
    import base64

    raw = value.encode("utf-8")
    out: list[str] = []
    for b64 in (base64.b64encode(raw).decode(), base64.urlsafe_b64encode(raw).decode()):
        out += [b64, b64.rstrip("=")]
    for shift in range(3):
        core = raw[(3 - shift) % 3:]
        core = core[:len(core) // 3 * 3]
        if len(core) >= 6:
            out += [base64.b64encode(core).decode(), base64.urlsafe_b64encode(core).decode()]
    return out


def pairs_of(secrets: Mapping[str, str] | Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
    return list(secrets.items() if isinstance(secrets, Mapping) else secrets)


def _is_basic_credential(value: str) -> bool:
    """True when ``value`` is base64 of ``user:password`` (what an ``Authorization: Basic`` holds)."""
    import base64
    import binascii

    try:
        raw = base64.b64decode(value + "=" * (-len(value) % 4), validate=True)
    except (binascii.Error, ValueError):
        return False
    return b":" in raw


_SECRET_WORDS = {"TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "CREDENTIALS", "APIKEY"}
_SECRET_PAIRS = {("API", "KEY"), ("ACCESS", "KEY"), ("PRIVATE", "KEY"), ("SECRET", "KEY")}
#: A last word that makes the value a place or a setting, not the secret itself.
_NOT_A_SECRET_END = {"ENV", "DIR", "DIRECTORY", "PATH", "FILE", "SOCK", "SOCKET", "PARALLELISM"}


def _names_a_secret(name: str) -> bool:
    """A name (of a variable or a config key) whose value is a secret: one of its words is TOKEN,
    SECRET, PASSWORD... (DB_PASSWORD, CI_JOB_TOKEN, webhook_secret, MY_API_KEY), never part of a
    word (TIKTOKEN_CACHE_DIR, TOKENIZERS_PARALLELISM) nor a name ending in _DIR, _PATH, _FILE..."""
    words = [w for w in re.split(r"[^A-Z0-9]+", name.upper()) if w]
    if not words or words[-1] in _NOT_A_SECRET_END:
        return False
    return any(w in _SECRET_WORDS for w in words) or any(pair in _SECRET_PAIRS for pair in zip(words, words[1:]))


def _is_secret_name(name: str) -> bool:
    up = name.upper()
    if up.endswith("_ENV"):  # names a variable, holds no secret itself
        return False
    return any(w in up for w in SECRET_NAME_WORDS)


class Redactor:
    """Replaces every known secret and every key shape with ``[redacted:<name>]``.

    Immutable once built; ``text``, ``binary`` and ``data`` are safe from any thread.
    """

    def __init__(self, secrets: Mapping[str, str] | Iterable[tuple[str, str]] = (), *,
                 shapes: Iterable[tuple[str, str]] = SHAPES):
        secrets = pairs = pairs_of(secrets)
        by_value: dict[str, str] = {}
        for name, value in pairs:
            value = str(value or "")
            if len(value.strip()) < MIN_SECRET_LEN:
                continue
            for variant in _forms(value):
                by_value.setdefault(variant, name)
            # a message cut short (ours, ``[:200]``, or the agent's own ``token[:20]``) or wrapped
            # (base64 at 64 or 76 columns) leaves a head or a tail of the secret, or of one of its
            # forms: those are known too
            for variant in (value, *_base64_forms(value)):
                if len(variant) >= PART_FROM:
                    for part in (variant[:PART_LEN], variant[-PART_LEN:]):
                        by_value.setdefault(part, name)
            if len(value) >= PART_FROM:  # cut anywhere (two prints with other text between): every
                # WINDOW characters at a STRIDE, so what stays in clear of each piece is short
                for i in (*range(0, len(value) - WINDOW + 1, STRIDE), len(value) - WINDOW):
                    by_value.setdefault(value[i:i + WINDOW], name)
        self.secrets: dict[str, str] = by_value
        """Each literal secret (and its URL-encoded forms) -> its name."""
        self.shapes = tuple(shapes)
        literals = sorted(by_value, key=len, reverse=True)  # the longest first: a URL before its token
        parts = [f"(?P<lit>{'|'.join(map(re.escape, literals))})"] if literals else []
        parts += [f"(?P<s{i}>{_renamed(p, i)})" for i, (_n, p) in enumerate(self.shapes)]
        self._re = re.compile("|".join(parts)) if parts else None
        self._shape_parts = parts[1:] if literals else parts
        self._by_found: dict[tuple[str, ...], re.Pattern] = {}
        self._literals = tuple(literals)
        # each literal holds an anchor (the shortest literals that hold no other): a text holding a
        # literal holds its anchor, so only the literals of the anchors found are looked for (a
        # secret's pieces, head and tail hold its 12-character windows: 124 searches over a 3 MB
        # report -> 84)
        self._anchors: dict[str, list[str]] = {}
        for lit in sorted(literals, key=len):
            anchor = next((a for a in self._anchors if a in lit), lit)
            self._anchors.setdefault(anchor, []).append(lit)
        self._rank = {lit: i for i, lit in enumerate(literals)}
        self._default_shapes = self.shapes == SHAPES
        self._all_shapes = tuple(range(len(self.shapes)))
        self._needs = tuple(_SHAPE_NEEDS[name] for name, _p in self.shapes) if self._default_shapes else ()
        # whole secrets (every form, no cut parts) for the pass over text whose lines are joined
        whole = sorted({f for name, value in pairs_of(secrets) for f in _forms(str(value or ""))
                        if len(str(value or "").strip()) >= MIN_SECRET_LEN}, key=len, reverse=True)
        self._whole = tuple(whole)
        self._whole_re = re.compile("|".join(map(re.escape, whole))) if whole else None

    @property
    def names(self) -> list[str]:
        """The names of the literal secrets it knows (never their values)."""
        return sorted(set(self.secrets.values()))

    def _replacement(self, m: re.Match) -> str:
        if "lit" in m.re.groupindex and m.group("lit") is not None:
            return f"[redacted:{self.secrets[m.group('lit')]}]"
        groups = m.re.groupindex
        for i, (name, _p) in enumerate(self.shapes):
            if f"s{i}" in groups and m.group(f"s{i}") is not None:
                keep = m.group(f"k{i}") if f"k{i}" in m.re.groupindex else None
                if name == "basic-auth" and not _is_basic_credential(m.group(f"s{i}")[len(keep or ""):]):
                    return m.group(0)  # "Basic features ...": prose, not base64 of user:password
                return (keep or "") + f"[redacted:{name}]"
        return m.group(0)  # pragma: no cover - one group always matched

    def text(self, s: str, _among: tuple[str, ...] | None = None, _live: tuple[int, ...] | None = None,
             _fields: bool = True) -> str:
        """``s`` with every secret replaced (``_among``: the literals worth looking for, ``_live``
        the default shapes, ``_fields`` whether a secret field may be named, when a caller already
        knows what its texts may hold: ``data`` over all its strings at once)."""
        if not s or self._re is None:
            return s
        if not self._default_shapes:
            if self._re.search(s) is not None:
                s = self._re.sub(self._replacement, s)
            return s
        found = self._found(s) if _among is None else tuple(lit for lit in _among if lit in s)
        live = self._live_shapes(s, _live)
        if found or live:
            if found and self._whole_re is not None and ("\n" in s or "\r" in s):
                s = self._split_sub(s)  # first: the main pass would take the cut secret's head and tail
                found = tuple(lit for lit in found if lit in s)
                live = self._live_shapes(s, live)
            if found or live:
                s = self._pattern_for(found, live).sub(self._replacement, s)
        return _field_sub(s) if _fields else s

    def _found(self, s: str) -> tuple[str, ...]:
        """The literal secrets in ``s``, longest first (as in the full pattern): substring searches,
        fast on long text, only for the literals whose anchor is there."""
        hits = [lit for anchor, lits in self._anchors.items() if anchor in s for lit in lits if lit in s]
        return tuple(sorted(hits, key=self._rank.__getitem__))

    def _live_shapes(self, s: str, among: tuple[int, ...] | None = None) -> tuple[int, ...]:
        """The default shapes (of ``among``, or all) that may match somewhere in ``s``
        (``_SHAPE_NEEDS``): a shape that matches nowhere changes nothing in the one-pass ``sub``,
        so leaving it out of the pattern leaves the result as it was. A short text is first
        tried against all of them at once (``_ANY_NEED``: one search instead of thirteen)."""
        if among is None:
            if len(s) < _ONE_SEARCH_BELOW and _ANY_NEED.search(s) is None \
                    and not any(need(s) for need in _NEED_FUNCS.values()):
                return ()
            among = self._all_shapes
        needs = self._needs
        return tuple(i for i in among if needs[i](s))

    def _split_sub(self, s: str) -> str:
        """A known secret cut by line breaks (a log wrapped at 80 columns, base64 wrapped at 76,
        ``print(token[:20]); print(token[20:])``): found in the text with its line breaks taken
        out, and replaced where it stood, breaks and all. One substring search per secret form
        when there is none; tried only where the main pass finds something (a secret of 32
        characters or more cut anywhere leaves its head or its tail whole on one line)."""
        joined = s.replace("\r", "").replace("\n", "")
        if not any(form in joined for form in self._whole):
            return s
        kept = [i for i, ch in enumerate(s) if ch not in "\r\n"]  # joined[k] is s[kept[k]]
        out, last = [], 0
        for m in self._whole_re.finditer(joined):
            start, end = kept[m.start()], kept[m.end() - 1] + 1
            out += [s[last:start], f"[redacted:{self.secrets.get(m.group(0), 'secret')}]"]
            last = end
        return "".join(out) + s[last:]

    def binary(self, b: bytes) -> bytes:
        """``b`` with every secret replaced (binary-safe: UTF-8 text is redacted as text)."""
        if not b or self._re is None:
            return b
        # bytes that are not UTF-8 stand as lone surrogates (surrogateescape) and come back exactly:
        # the one text pipeline (its forms, cut and split secrets, shapes) for every byte string
        return self.text(b.decode("utf-8", "surrogateescape")).encode("utf-8", "surrogateescape")

    def data(self, value: Any) -> Any:
        """A copy of a JSON-like value (dicts, lists, strings) with every string redacted."""
        if self._re is None:
            return self._data(value)
        strings: list[str] = []
        copy = _copy(value, strings)
        # One check over every string (keys too), joined by NUL: what a match needs never
        # includes a NUL, and at a NUL every lookaround sees what it sees at a string's end or
        # start, so a string with a secret is always found (a hit spanning two strings only costs
        # the per-string pass). Nothing found: the copy equals the per-string pass's result.
        joined = "\0".join(strings)
        if not self._default_shapes:
            return self._data(value) if self._may_match(joined) else copy
        # each string then looks only for the literals, the shapes and the field names that the
        # whole value may hold (what a string needs for a match, the joined strings hold too)
        among = self._found(joined)
        live = self._live_shapes(joined)
        fields = _field_names_in(joined)
        if not among and not live and not fields:
            return copy
        return self._data(value, among, live, fields)

    def _pattern_for(self, found: tuple[str, ...], live: tuple[int, ...]) -> re.Pattern:
        """Of the literal secrets only those ``found`` in the text (longest first, as in the full
        pattern), of the shapes only the ``live`` ones (in their order): an alternation of every
        form of every secret and every shape, tried at each position, was most of the time a
        redaction took."""
        key = (found, live)
        rx = self._by_found.get(key)
        if rx is None:
            parts = ([f"(?P<lit>{'|'.join(map(re.escape, found))})"] if found else [])
            parts += [self._shape_parts[i] for i in live]
            rx = re.compile("|".join(parts)) if parts else re.compile(r"(?!)")
            if len(self._by_found) < 256:
                self._by_found[key] = rx
        return rx

    def _may_match(self, s: str) -> bool:
        """False only when the full pattern has no match in ``s``. With the default shapes it
        looks for what every match must contain (a secret itself, or what ``_SHAPE_NEEDS`` says
        a shape needs), far faster on long text than the full pattern (lookbehinds tried at every
        position); with custom shapes it is the full pattern."""
        if not self._default_shapes:
            return self._re.search(s) is not None
        return any(a in s for a in self._anchors) or any(need(s) for need in _SHAPE_NEEDS.values())

    def _data(self, value: Any, among: tuple[str, ...] | None = None, live: tuple[int, ...] | None = None,
              fields: bool = True) -> Any:
        if isinstance(value, str):
            return self.text(value, among, live, fields)
        if isinstance(value, Mapping):
            return {self.text(k, among, live, fields) if isinstance(k, str) else k: self._data(v, among, live, fields)
                    for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [self._data(v, among, live, fields) for v in value]
        return value

    def holds_secret(self, s: str) -> bool:
        """True when ``s`` holds a known secret or a key shape."""
        return bool(s) and self._re is not None and (self._re.search(s) is not None
                                                     or (self._default_shapes and _field_sub(s) != s))

    def with_secrets(self, more: Mapping[str, str]) -> "Redactor":
        """A new redactor that also knows ``more``."""
        merged = {}
        for value, name in self.secrets.items():
            merged.setdefault(name + "\0" + value, (name, value))
        pairs = list(merged.values()) + list(more.items())
        return Redactor(pairs, shapes=self.shapes)


def _copy(value: Any, strings: list[str]) -> Any:
    """``Redactor._data``'s copy without the redaction; collects every string (keys too)."""
    t = type(value)
    if t is str:
        strings.append(value)
        return value
    if value is None or t is int or t is float or t is bool:
        return value
    if t is dict or (t is not list and t is not tuple and isinstance(value, Mapping)):
        out = {}
        for k, v in value.items():
            if isinstance(k, str):
                strings.append(k)
            out[k] = _copy(v, strings)
        return out
    if t is list or t is tuple or isinstance(value, (list, tuple)):
        return [_copy(v, strings) for v in value]
    if isinstance(value, str):
        strings.append(value)
    return value


def _renamed(pattern: str, i: int) -> str:
    """A shape's ``keep`` group renamed per shape, so all shapes fit in one pattern."""
    return pattern.replace("(?P<keep>", f"(?P<k{i}>")


def environ_secrets(environ: Mapping[str, str]) -> dict[str, str]:
    """Secrets the environment holds: pinned ``HARNESS_*`` secrets and well-known key variables."""
    out = {}
    for name, value in environ.items():
        # any variable named as a secret (DB_PASSWORD, CI_JOB_TOKEN...), not only HARNESS_* ones: the
        # target inherits the whole environment and may print any of it
        if name in WELL_KNOWN or (name.startswith("HARNESS_") and _is_secret_name(name)) or _names_a_secret(name):
            out[name] = value
    return out


def config_secrets(config: Any, environ: Mapping[str, str]) -> dict[str, str]:
    """Secrets a loaded config names: generated channel credentials, each ``*_env`` key's
    variable, the LLM upstream key, the alert webhook URL (duck-typed: any Config works)."""
    out: dict[str, str] = {}
    gen = getattr(config, "secrets", None)
    for field in ("bot_token", "webhook_secret", "app_secret", "verify_token", "whatsapp_token"):
        value = getattr(gen, field, "") if gen is not None else ""
        if value:
            out[field] = str(value)
    sandbox = getattr(config, "sandbox", None)
    for name in ("llm_upstream_key_env", "anthropic_upstream_key_env"):
        key_env = getattr(sandbox, name, "") if sandbox is not None else ""
        if key_env and environ.get(key_env):
            out[key_env] = environ[key_env]

    def walk(table: Any) -> None:
        if not isinstance(table, Mapping):
            return
        for key, value in table.items():
            if isinstance(value, Mapping):
                walk(value)
            elif isinstance(key, str) and key.lower().endswith("_env") and isinstance(value, str) \
                    and environ.get(value):
                out[value] = environ[value]
            elif isinstance(key, str) and _names_a_secret(key) and isinstance(value, str) \
                    and not _PLACEHOLDER.fullmatch(value.strip()):
                out[key] = value  # a secret written into the config ([target.env] DB_PASSWORD = "...")

    sections = getattr(config, "sections", None) or {}
    walk(sections)
    alerts = sections.get("alerts") if isinstance(sections, Mapping) else None
    if isinstance(alerts, Mapping) and isinstance(alerts.get("webhook_url"), str):
        out["alerts.webhook_url"] = alerts["webhook_url"]
    return out


_PLACEHOLDER = re.compile(r"\{[A-Za-z0-9_]+\}")


def for_config(config: Any, environ: Mapping[str, str] | None = None) -> Redactor:
    """The run's redactor: every secret of ``config`` and of the environment, and the key shapes."""
    environ = os.environ if environ is None else environ
    return Redactor({**environ_secrets(environ), **config_secrets(config, environ)})


def from_environ(environ: Mapping[str, str] | None = None) -> Redactor:
    """Before a config is read: the environment's secrets and the key shapes."""
    return Redactor(environ_secrets(os.environ if environ is None else environ))


_lock = threading.Lock()
_active: Redactor | None = None
_active_for: tuple | None = None


def install(redactor: Redactor) -> Redactor:
    """Make ``redactor`` the one every sink applies; returns the one it replaced."""
    global _active, _active_for
    with _lock:
        previous = _active or from_environ()
        _active, _active_for = redactor, None
    return previous


def for_run(config: Any) -> Redactor:
    """Build the run's redactor from ``config`` and install it, once: called again for the
    same secrets (the CLI, then the runner) it keeps the one already built."""
    global _active, _active_for
    key = (repr(getattr(config, "secrets", None)), id(getattr(config, "sections", None)),
           tuple(sorted(environ_secrets(os.environ).items())))
    with _lock:
        if _active is not None and _active_for == key:
            return _active
        _active, _active_for = for_config(config), key
        return _active


def active() -> Redactor:
    """The redactor of the current run (before any: the environment's secrets and the shapes)."""
    global _active
    if _active is None:
        with _lock:
            if _active is None:
                _active = from_environ()
    return _active


#: Terminal control sequences an agent's output may carry: CSI (colours, screen clears, cursor
#: moves, queries), OSC (window titles, OSC 8 links, clipboard writes) ended by BEL or ST, other
#: two-byte ESC sequences, and the C1 forms of CSI/OSC.
_TERMINAL_SEQUENCES = re.compile(
    r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]"            # CSI ... final byte
    r"|(?:\x1b[\]PX^_]|[\x9d\x90\x98\x9e\x9f]).*?(?:\x07|\x1b\\|\x9c|$)"  # OSC/DCS/SOS/PM/APC ... BEL or ST
    r"|\x1b[ -/]*[0-~]?",                            # other ESC sequences, or a lone ESC
    re.S)
#: C0 and C1 controls but newline and tab, and the bidirectional overrides and isolates (U+202A-E,
#: U+2066-9) that reorder what a terminal shows ("Trojan source").
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def strip_sequences(text: str) -> str:
    """``text`` without terminal control sequences (CSI, OSC, DCS..., their C1 forms) and C1
    controls; other control characters are the caller's (``inert`` removes them too)."""
    return _C1.sub("", _TERMINAL_SEQUENCES.sub("", text))


_C1 = re.compile(r"[\x7f-\x9f]")


def inert(text: str) -> str:
    """``text`` safe to echo on a terminal: control sequences and control characters removed
    (newlines and tabs kept). Whatever the agent printed cannot clear the screen, retitle the
    window, plant a link or query the terminal through the harness's own messages."""
    return _CONTROL.sub("", _TERMINAL_SEQUENCES.sub("", text))


class RedactingStream(io.TextIOBase):
    """A text stream that redacts what is written with the active redactor (the console)."""

    def __init__(self, stream: Any):
        self.stream = stream

    def write(self, s: str) -> int:
        self.stream.write(active().text(s))
        return len(s)

    def writelines(self, lines: Iterable[str]) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        self.stream.flush()

    def isatty(self) -> bool:
        return bool(getattr(self.stream, "isatty", lambda: False)())

    def fileno(self) -> int:
        return self.stream.fileno()

    def writable(self) -> bool:
        return True

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return getattr(self.stream, "encoding", "utf-8") or "utf-8"

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)
