"""A check's parameters as a pydantic type: one source for `harness check`, the schema and the docs.

Every ``CheckDef`` carries ``params``, the type of what a case writes after the check's name
(``replies: {min: 1}`` -> ``Replies``, ``reply: {regex: ...}`` -> ``Regex``). From it come:

- the loader's errors: the case-file model (``schema.models.case_file_model``) types each
  ``expect`` key with it, so ``harness check`` reports a wrong type, a number out of range, an
  unknown key or a regex that does not compile with the file, case, line, key and fix;
- ``CheckDef.validate(value)``: the same validation for one value (``None`` when it holds);
- the JSON Schema of ``harness schema`` (types, enumerations, bounds, descriptions);
- the generated "Check parameters" section of docs/CASES.md (``docs_table``).

A validator's message may carry its own fix after ``FIX`` (harness.schema.problems splits it).
"""

from __future__ import annotations

import functools
import re
import typing
from typing import Annotated, Any, Literal, Mapping

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError, create_model, model_validator

from harness.schema.models import FIX
from harness.schema.problems import path_text, problems

#: Strict like the case file: no key the check does not read, no "3" for 3, no nan.
STRICT = ConfigDict(extra="forbid", strict=True, allow_inf_nan=False)


class Params(BaseModel):
    """A check's table of parameters: its name and docstring describe it in the schema."""

    model_config = STRICT


#: The most pattern items a case regex may unroll its counted repeats into: the ``regex`` module
#: (checks/base.search) builds a{n} as n copies, about 270 bytes each, so a{1000000000} took the
#: run's memory until the kernel killed it (100,000 is about 38 MB).
MAX_UNROLLED = 100_000


def _unrolled(items) -> int:  # noqa: ANN001 - re._parser's SubPattern
    """How many items the minimum counts of ``items``' repeats unroll to (nested ones multiply)."""
    from re import _constants as c  # type: ignore[attr-defined]

    total = 0
    for op, arg in items:
        if op in (c.MAX_REPEAT, c.MIN_REPEAT, c.POSSESSIVE_REPEAT):
            total += max(1, arg[0]) * _unrolled(arg[2])
        elif op in (c.SUBPATTERN, c.ATOMIC_GROUP):
            total += _unrolled(arg[-1])
        elif op in (c.ASSERT, c.ASSERT_NOT):
            total += _unrolled(arg[1])
        elif op == c.BRANCH:
            total += max((_unrolled(b) for b in arg[1]), default=0)
        elif op == c.GROUPREF_EXISTS:
            total += max(_unrolled(arg[1]), _unrolled(arg[2]) if arg[2] is not None else 0)
        else:
            total += 1
        if total > MAX_UNROLLED:
            return total
    return total


def _compiles(value: str) -> str:
    try:
        re.compile(value)
        from re import _parser  # type: ignore[attr-defined]

        unrolled = _unrolled(_parser.parse(value))
    except re.error as exc:
        raise ValueError(f"invalid regular expression {value!r}: {exc}{FIX}escape the special character "
                         "(\\( \\[ \\. ...) or close the group; Python `re` syntax") from None
    if unrolled > MAX_UNROLLED:
        raise ValueError(f"regular expression {value[:80]!r} repeats too much: its counts unroll to more than "
                         f"{MAX_UNROLLED:,} items, which would take the run's memory{FIX}use an open repeat "
                         "(a+, .{1000,}) or a smaller count")
    return value


def _not_blank(value: str) -> str:
    if not value.strip():
        raise ValueError(f"must not be blank, got {value!r}{FIX}write it in words")
    return value


#: Text that is not blank (a question, a reason): spaces alone say nothing.
Words = Annotated[str, AfterValidator(_not_blank), Field(json_schema_extra={"pattern": r"\S"})]
Regex = Annotated[str, AfterValidator(_compiles),
                  Field(description="a Python regular expression (re.search; (?i) ignores case)",
                        json_schema_extra={"format": "regex"})]
Count = Annotated[int, Field(ge=0, description="a whole number >= 0")]
Seconds = Annotated[float, Field(ge=0, description="seconds >= 0")]
Millis = Annotated[float, Field(ge=0, description="milliseconds >= 0")]
Score = Annotated[float, Field(ge=0, le=1, description="a score from 0 to 1")]
Text = Annotated[str, Field(min_length=1)]
#: One string or a non-empty list of them (``contains: Summary`` / ``contains: [a, b]``).
Strings = Annotated[str | Annotated[list[str], Field(min_length=1)],
                    Field(description="a string or a non-empty list of strings")]
Texts = Annotated[Text | Annotated[list[Text], Field(min_length=1)],
                  Field(description="a non-empty string or a non-empty list of them")]
ToolNames = Annotated[str | Annotated[list[str], Field(min_length=1)],
                      Field(description="a tool name or a non-empty list of tool names (llm, fetch_document, "
                                        "telegram.sendMessage, a tool double's name...)")]
#: A flag check is written ``<name>: true``.
Flag = Annotated[Literal[True], Field(description="true (false switches off a check a layer adds by default)",
                                      json_schema_extra={"examples": [True]})]
Of = Annotated[Literal["reply", "post"], Field(description="reply: the replies to the user; post: the "
                                                           "messages sent to anyone else")]


class AtLeastOne(Params):
    """A table of bounds or options of which at least one must be given (``{}`` checks nothing)."""

    @model_validator(mode="after")
    def _at_least_one(self):
        if not self.model_fields_set:
            keys = _keys(type(self))
            raise ValueError(f"needs at least one of {', '.join(keys)}{FIX}e.g. {{{keys[0]}: 1}}")
        return self


def _keys(model: type[BaseModel]) -> list[str]:
    return [f.alias or n for n, f in model.model_fields.items()]


def ordered(lo: str, hi: str):
    """An after-validator: ``lo`` may not exceed ``hi`` when both are given."""

    def check(self):
        a, b = getattr(self, lo), getattr(self, hi)
        if a is not None and b is not None and a > b:
            raise ValueError(f"{lo} {a} is greater than {hi} {b}{FIX}make {lo} <= {hi}")
        return self

    return model_validator(mode="after")(check)


def legacy(validator: Any) -> Any:
    """The type of a check registered with a validator ``(params) -> str | None`` (the form
    before the parameters' types): validated by it, described as any value."""

    def check(value: Any) -> Any:
        problem = validator(value)
        if problem:
            raise ValueError(f"{problem}{FIX}see the check's documentation")
        return value

    return Annotated[Any, AfterValidator(check)]


# --------------------------------------------------------------------------- validation


@functools.lru_cache(maxsize=512)
def _holder(params: Any, name: str = "value") -> type[BaseModel]:
    return create_model("Parameters", __config__=STRICT, value=(params, Field(..., alias=name)))


def problem(params: Any, value: Any, name: str = "value") -> str | None:
    """What is wrong with ``value`` as the parameters (of type ``params``) of check ``name`` (None
    when it holds): the first problem, its key path first ("min: ..."), its fix after ``; fix: ``."""
    data = {name: value}
    try:
        _holder(params, name).model_validate(data)
    except ValidationError as exc:
        found = problems(exc, data)
    else:
        return None
    first = found[0]
    where = path_text(first.loc[1:-1] if first.message.startswith("unknown key") else first.loc[1:])
    text = f"{where}: {first.message}" if where else first.message
    return f"{text}; fix: {first.fix}" if first.fix else text


def known_keys(params: Any) -> list[str]:
    """The keys a table of parameters takes (``[]`` for a value that is no table)."""
    return _keys(params) if isinstance(params, type) and issubclass(params, BaseModel) else []


def _examples(params: Any) -> list[Any]:
    if isinstance(params, type) and issubclass(params, BaseModel):
        extra = params.model_config.get("json_schema_extra") or {}
        return list(extra.get("examples") or []) if isinstance(extra, Mapping) else []
    for meta in getattr(params, "__metadata__", ()):
        extra = getattr(meta, "json_schema_extra", None)
        if isinstance(extra, Mapping) and extra.get("examples"):
            return list(extra["examples"])
    inner = typing.get_args(params)
    return next((found for arg in inner if (found := _examples(arg))), [])


def example(params: Any) -> str:
    """The first example the parameters' type carries (``json_schema_extra={"examples": [...]}``,
    on the model, the annotation or a member of the union), in YAML flow style; '' when none."""
    found = _examples(params)
    return flow(found[0]) if found else ""


def flow(value: Any) -> str:
    """``value`` in YAML flow style, as a case file would write it."""
    if value is True or value is False:
        return str(value).lower()
    if value is None:
        return "null"
    if isinstance(value, str):
        return value if re.fullmatch(r"[A-Za-z0-9_.$@/-]+", value) and value not in ("true", "false", "null") \
            else '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{flow(k)}: {flow(v)}" for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(flow(v) for v in value) + "]"
    return str(value)


def examples(*values: Any) -> dict[str, Any]:
    """``json_schema_extra`` with these examples (the first is the fix's "e.g.")."""
    return {"examples": list(values)}


# --------------------------------------------------------------------------- docs


def _node(schema: Mapping[str, Any], defs: Mapping[str, Any]) -> Mapping[str, Any]:
    while "$ref" in schema:
        schema = defs[schema["$ref"].rsplit("/", 1)[-1]]
    return schema


def _describe(schema: Mapping[str, Any], defs: Mapping[str, Any]) -> str:
    """A short type text of one JSON Schema node ("whole number >= 0", "one of en, es")."""
    schema = _node(schema, defs)
    if "anyOf" in schema:
        return " or ".join(dict.fromkeys(_describe(s, defs) for s in schema["anyOf"]))
    if "const" in schema:
        return flow(schema["const"])
    if "enum" in schema:
        return "one of " + ", ".join(flow(v) for v in schema["enum"])
    kind = schema.get("type")
    lo = schema.get("minimum", schema.get("exclusiveMinimum"))
    hi = schema.get("maximum", schema.get("exclusiveMaximum"))
    bounds = (f" {lo:g} to {hi:g}" if lo is not None and hi is not None else
              f" >= {lo:g}" if lo is not None else f" <= {hi:g}" if hi is not None else "")
    if kind in ("integer", "number"):
        return ("whole number" if kind == "integer" else "number") + bounds
    if kind == "boolean":
        return "true/false"
    if kind == "null":
        return "null"
    if kind == "string":
        return ("regex" if schema.get("format") == "regex" else "non-blank text" if schema.get("pattern") == r"\S"
                else "non-empty text" if schema.get("minLength") else "text")
    if kind == "array":
        return f"list of {_describe(schema.get('items', {}), defs)}" + (
            f" (at least {schema['minItems']})" if schema.get("minItems", 0) > 1 else "")
    if kind == "object":
        if not schema.get("properties") and schema.get("description") and schema.get("additionalProperties") is True:
            return schema["description"]  # a free table (a partial JSON): what it means says more than "any"
        if schema.get("properties"):
            return "{" + ", ".join(schema["properties"]) + "}"
        values = list((schema.get("patternProperties") or {}).values()) or [schema.get("additionalProperties")]
        keys = (schema.get("propertyNames") or {}).get("description", "key")
        value = values[0] if isinstance(values[0], Mapping) and values[0] else None
        return f"table of {keys}: " + (_describe(value, defs) if value and ("type" in value or "anyOf" in value
                                                                          or "$ref" in value) else
                                       (value or {}).get("description", "any value"))
    return schema.get("description", "any value")


def describe(params: Any) -> str:
    """One docs cell: the parameters' keys with their types and meaning, or the value's type."""
    schema = _holder(params).model_json_schema(mode="validation")
    defs = schema.get("$defs", {})
    node = _node(schema["properties"]["value"], defs)
    members = [_node(m, defs) for m in node.get("anyOf", [node])]
    tables = [m for m in members if m.get("type") == "object" and m.get("properties")]
    if len(tables) != 1:
        return _describe(node, defs)
    others = [_describe(m, defs) for m in members if m is not tables[0]]
    required = set(tables[0].get("required", ()))
    groups: dict[tuple[str, str], list[str]] = {}  # keys of one type and meaning are listed together
    for k, v in tables[0]["properties"].items():
        kind = _describe(v, defs) + (", required" if k in required else "")
        groups.setdefault((kind, _node(v, defs).get("description") or ""), []).append(f"`{k}`")
    keys = "; ".join(f"{', '.join(names)} ({kind})" + (f": {meaning}" if meaning else "")
                     for (kind, meaning), names in groups.items())
    return (" or ".join(others) + ", or a table: " if others else "") + keys


BEGIN = "<!-- check parameters: generated from harness/checks (tests/test_docs.py) -->"
END = "<!-- end of check parameters -->"


def docs_table(registry: Mapping[str, Any], keys: Mapping[str, Any] | None = None) -> str:
    """The "Check parameters" table of docs/CASES.md, one row a check, from the registry's types;
    ``keys``: case keys that parameterise checks outside the registry (``baseline``), by type."""
    rows = ["| check | parameters | e.g. |", "| --- | --- | --- |"]
    items = [(f"`{name}`", registry[name].params) for name in sorted(registry)]
    items += [(f"`{name}:` (case key)", params) for name, params in sorted((keys or {}).items())]
    for label, params in items:
        shown = example(params)
        rows.append(f"| {label} | {describe(params).replace('|', '&#124;')} | "
                    f"{('`' + shown + '`') if shown else ''} |")
    return "\n".join([BEGIN, *rows, END])



__all__ = ["AtLeastOne", "BEGIN", "END", "Count", "FIX", "Flag", "Millis", "Of", "Params", "Regex", "STRICT", "Score",
           "Seconds", "Strings", "Text", "Texts", "ToolNames", "Words", "describe", "docs_table", "example",
           "examples", "flow", "known_keys", "legacy", "ordered", "problem"]
