"""The agent's own session state after a turn, read through the target's state probe.

``state: {"$.document.url": {contains: "paper.pdf"}, "$.task": null, "$.pending": {absent: true}}``

Paths are simple JSON paths: ``$``, ``$.a.b``, ``$.a[0].b``. A bare value means equals
(``null`` included); a table names one or more operators: ``equals``, ``not_equals``,
``contains`` (substring of a string, or member of a list), ``regex``, ``exists: true|false``,
``absent: true`` (missing or null). Without a probe (no ``state_url``, or the probe failed)
the evidence is ``unavailable`` with the reason: never a pass.
"""

from __future__ import annotations

import json
import re
from typing import Annotated, Any, Mapping

from pydantic import AfterValidator, Field

from harness.checks.base import RegexTooSlow, probed_state, search, unavailable, verdict
from harness.checks.params import FIX, examples
from harness.types import Case, Evidence, Observation

EVAL = "state@1"
OPS = ("equals", "not_equals", "contains", "regex", "exists", "absent")
_PATH_RE = re.compile(r"^\$((?:\.[A-Za-z_][A-Za-z0-9_\-]*|\[\d+\])*)$")
_STEP_RE = re.compile(r"\.([A-Za-z_][A-Za-z0-9_\-]*)|\[(\d+)\]")
MISSING = object()


def resolve(data: Any, path: str) -> Any:
    """The value at ``path`` in ``data``, or ``MISSING``."""
    m = _PATH_RE.match(path)
    if not m:
        raise ValueError(f"bad path {path!r}")
    value = data
    for key, index in _STEP_RE.findall(m.group(1)):
        if key:
            if not isinstance(value, Mapping) or key not in value:
                return MISSING
            value = value[key]
        else:
            i = int(index)
            if not isinstance(value, list) or i >= len(value):
                return MISSING
            value = value[i]
    return value


def _show(value: Any) -> str:
    return "(missing)" if value is MISSING else json.dumps(value, ensure_ascii=False, default=str)[:160]


def _ops(expect: Any) -> dict[str, Any]:
    if isinstance(expect, Mapping) and expect and set(expect) <= set(OPS):
        return dict(expect)
    return {"equals": expect}


def judge(value: Any, expect: Any) -> str | None:
    """Why ``value`` does not satisfy ``expect`` ('' / None when it does)."""
    for op, want in _ops(expect).items():
        present = value is not MISSING and value is not None
        if op == "equals" and (value is MISSING or value != want):
            return f"is {_show(value)}, wanted {_show(want)}"
        if op == "not_equals" and value is not MISSING and value == want:
            return f"is {_show(value)}, wanted anything else"
        if op == "contains":
            if isinstance(value, str) and isinstance(want, str) and want in value:
                continue
            if isinstance(value, list) and want in value:
                continue
            return f"is {_show(value)}, which does not contain {_show(want)}"
        if op == "regex" and not (isinstance(value, str) and search(want, value)):
            return f"is {_show(value)}, which does not match /{want}/"
        if op == "exists" and present != bool(want):
            return f"is {_show(value)}, wanted it {'present' if want else 'absent'}"
        if op == "absent" and present == bool(want):
            return f"is {_show(value)}, wanted it {'absent' if want else 'present'}"
    return None


def state(case: Case, obs: Observation, turn: int, params: Mapping[str, Any]) -> Evidence:
    name = "state"
    expected = "; ".join(f"{p} {_show_expect(e)}" for p, e in params.items())
    t, missing = probed_state(name, turn, obs, expected, EVAL, "state")
    if missing is not None:
        return missing
    problems, seen = [], []
    for path, expect in params.items():
        value = resolve(t.state, path)
        seen.append(f"{path}={_show(value)}")
        try:
            why = judge(value, expect)
        except RegexTooSlow as exc:
            return unavailable(name, turn, expected=expected, reason=f"turn {turn}: {path}: {exc.message}",
                               evaluator=EVAL)
        if why:
            problems.append(f"{path} {why}")
    reason = (f"turn {turn}: state holds" if not problems
              else f"turn {turn}: state " + "; ".join(problems))
    return verdict(name, turn, not problems, expected=expected, observed="; ".join(seen), reason=reason,
                   evaluator=EVAL)


def _show_expect(expect: Any) -> str:
    ops = _ops(expect)
    return ", ".join(f"{op} {_show(v)}" for op, v in ops.items())


def _operators(value: Any) -> Any:
    """A table of operators (its keys all among OPS) is checked; any other value is compared as is."""
    if isinstance(value, Mapping) and value and set(value) <= set(OPS):
        if "regex" in value:
            if not isinstance(value["regex"], str):
                raise ValueError(f"regex takes a regular expression, got {value['regex']!r}{FIX}quote the pattern")
            try:
                re.compile(value["regex"])
            except re.error as exc:
                raise ValueError(f"bad regex {value['regex']!r}: {exc}{FIX}correct the pattern (Python re)") from None
        for flag in ("exists", "absent"):
            if flag in value and not isinstance(value[flag], bool):
                raise ValueError(f"{flag} takes true or false, got {value[flag]!r}"
                                 f"{FIX}write {flag}: true or {flag}: false")
    return value


def _path(path: str) -> str:
    if not _PATH_RE.match(path):
        raise ValueError(f"path {path!r} is not a simple JSON path ($, $.a.b, $.a[0])"
                         f"{FIX}write the path from the state's root, e.g. \"$.{path.lstrip('$.')}\"")
    return path


StatePath = Annotated[str, AfterValidator(_path), Field(description="a JSON path: $, $.a.b, $.a[0]",
                                                        json_schema_extra={"pattern": _PATH_RE.pattern})]
Expectation = Annotated[Any, AfterValidator(_operators),
                        Field(description="a value (equals; null included) or a table of operators: "
                                          + ", ".join(OPS))]
StateParams = Annotated[dict[StatePath, Expectation],
                        Field(min_length=1, description="per JSON path of the state probe: what its value holds",
                              json_schema_extra=examples({"$.document.url": {"contains": "paper.pdf"},
                                                          "$.task": None}))]


from harness.checks.base import CheckDef  # noqa: E402

CHECKS = (CheckDef("state", state, StateParams, EVAL),)
