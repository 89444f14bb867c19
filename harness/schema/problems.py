"""pydantic's errors as the harness reports problems: where (a key path), what, and a fix.

``problems(exc, data)`` turns every error of a ValidationError into a ``Problem``: the key
path in the user's terms (``cases[2].turns[0].wait_s``, union members and validator names
left out), one message per value (a value that fits none of a union's types is one problem
saying what it may be), and a fix.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any, Iterable

from pydantic import ValidationError


@dataclass(frozen=True)
class Problem:
    loc: tuple
    """Keys and list indexes into the validated data."""
    message: str
    fix: str

    @property
    def path(self) -> str:
        return path_text(self.loc)


def path_text(loc: Iterable[Any]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _shown(value: Any) -> str:
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if value is True or value is False or value is None:  # as the YAML / TOML said it
        return {True: "true", False: "false", None: "null"}[value]
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _data_loc(loc: tuple, data: Any, kind: str = "") -> tuple[tuple, bool]:
    """The part of ``loc`` that names places in ``data``, and whether a union/validator tag was skipped."""
    out: list[Any] = []
    node = data
    skipped = False
    for i, part in enumerate(loc):
        if isinstance(node, dict) and part in node:
            out.append(part)
            node = node[part]
        elif isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node):
            out.append(part)
            node = node[part]
        elif kind == "missing" and isinstance(node, dict) and i == len(loc) - 1 and not skipped:
            out.append(part)  # a missing key
        else:
            skipped = True
    return tuple(out), skipped


_KINDS = {
    "float_type": "a number", "int_type": "a whole number", "string_type": "text", "bool_type": "true or false",
    "list_type": "a list", "dict_type": "a table", "model_type": "a table", "model_attributes_type": "a table",
    "literal_error": None, "none_required": "empty",
}


def _yaml_words(text: str) -> str:
    """Python's spelling of the constants in pydantic's enumerations, as YAML and TOML write them."""
    return re.sub(r"\b(True|False|None)\b", lambda m: {"True": "true", "False": "false", "None": "null"}[m.group(1)],
                  text)


def _fix(err: dict, key: str, docs: str = "docs/CONFIG.md") -> str:
    kind = err["type"]
    ctx = err.get("ctx") or {}
    if kind == "extra_forbidden":
        return f"remove {key!r} or correct its spelling ({docs} lists every key)"
    if kind == "missing":
        return f"add {key}"
    if kind == "finite_number":
        return "write a finite number (not nan or inf)"
    if kind in ("greater_than", "greater_than_equal", "less_than", "less_than_equal"):
        lo = ctx.get("gt", ctx.get("ge"))
        hi = ctx.get("lt", ctx.get("le"))
        return f"write a number {'>' if 'gt' in ctx else '>='} {lo}" if lo is not None else \
            f"write a number {'<' if 'lt' in ctx else '<='} {hi}"
    if kind == "literal_error":
        return f"write one of {_yaml_words(str(ctx.get('expected', '')))}"
    if kind == "string_pattern_mismatch":
        return f"match the pattern {ctx.get('pattern', '')}"
    if kind in ("too_short", "too_long"):
        return f"{'add' if kind == 'too_short' else 'remove'} items of {key}"
    if kind == "value_error":
        return "correct the value (docs/CONFIG.md, docs/CASES.md)"
    wanted = _KINDS.get(kind)
    return f"write {wanted} for {key}" if wanted else "correct the value"


def problems(exc: ValidationError, data: Any, docs: str = "docs/CONFIG.md") -> list[Problem]:
    """Every error of ``exc`` (raised validating ``data``) as a Problem, one per value. ``docs``: the
    page an unknown key's fix points at (docs/CASES.md for a case file, docs/CONFIG.md for harness.toml)."""
    grouped: dict[tuple, list[tuple[dict, bool]]] = {}
    for err in exc.errors(include_url=False):
        loc, skipped = _data_loc(tuple(err["loc"]), data, err["type"])
        grouped.setdefault(loc, []).append((err, skipped))
    unions = [loc for loc, errs in grouped.items() if all(skipped for _, skipped in errs)]
    for loc in unions:  # a union member's deeper error says more than "not the other member"
        if any(other != loc and other[:len(loc)] == loc for other in unions):
            del grouped[loc]
    out: list[Problem] = []
    for loc, errs in grouped.items():
        key = (f"{loc[-2]}[{loc[-1]}]" if len(loc) > 1 and isinstance(loc[-1], int) else str(loc[-1])) if loc \
            else "the file"
        # a union member of the right type that refused the value (a bound, a validator) says why
        specific = [(err, skipped) for err, skipped in errs if err["type"] not in _KINDS
                    and not err["type"].endswith("_type")] if len(errs) > 1 else []
        errs = specific[:1] or errs
        first = errs[0][0]
        if len(errs) > 1 and all(skipped for _, skipped in errs):  # a union: say what it may be
            kinds = []
            for err, _ in errs:
                kind = _KINDS.get(err["type"])
                if kind is None:
                    kind = _yaml_words(err["msg"].replace("Input should be ", ""))
                if kind not in kinds:
                    kinds.append(kind)
            message = f"must be {' or '.join(kinds)}, got {_shown(first.get('input'))}"
            fix = f"write {' or '.join(kinds)} for {key}"
        else:
            err = first
            msg = err["msg"]
            if err["type"] == "extra_forbidden":
                message = f"unknown key {key!r}"
            elif err["type"] == "missing":
                message = f"missing required key {key!r}"
            elif err["type"] in ("too_short", "too_long"):
                ctx = err.get("ctx") or {}
                bound = ctx.get("min_length") if err["type"] == "too_short" else ctx.get("max_length")
                word = "at least" if err["type"] == "too_short" else "at most"
                message = f"must have {word} {bound} item{'s' if bound != 1 else ''}, got {_shown(err.get('input'))}"
            elif err["type"] in ("model_type", "dict_type", "model_attributes_type"):
                message = f"must be a table ({{key: value, ...}}), got {_shown(err.get('input'))}"
            elif err["type"] == "value_error":
                message = msg.removeprefix("Value error, ")
            else:
                msg = _yaml_words(msg) if err["type"] == "literal_error" else msg
                message = f"{msg[0].lower()}{msg[1:]}, got {_shown(err.get('input'))}"
            fix = _fix(err, key, docs)
            if " | fix: " in message:  # a validator's own fix (harness.schema.models.FIX)
                message, fix = message.split(" | fix: ", 1)
        out.append(Problem(loc=loc, message=message, fix=fix))
    return out
