"""Issue 13: `harness schema` writes JSON Schema that validates every bundled case file and the
bundled harness.toml, and rejects the mutated ones the pydantic models reject."""

from __future__ import annotations

import json
import math
import tomllib
from pathlib import Path

import jsonschema
import pytest
from pydantic import ValidationError

from harness.cases import file_model
from harness.cli import main
from harness.schema.export import CASE_FILE, CONFIG_FILE
from harness.schema.models import ConfigModel
from harness.schema.yamlload import load_file, loads, strip_lines
from tests.hostile.input_mutants import BASE_CASES, BASE_CONFIG, case_mutants, config_mutants

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = sorted((ROOT / "fixtures").glob("*/*.yaml"))
#: Rejected by pydantic for reasons JSON Schema cannot say (finite numbers; Python validators).
NOT_IN_JSON_SCHEMA = {"finite_number", "value_error"}


@pytest.fixture(scope="module")
def schemas(tmp_path_factory) -> dict[str, jsonschema.protocols.Validator]:
    out = tmp_path_factory.mktemp("schemas")
    assert main(["schema", "--out", str(out)]) == 0
    loaded = {name: json.loads((out / name).read_text()) for name in (CASE_FILE, CONFIG_FILE)}
    for schema in loaded.values():
        jsonschema.Draft202012Validator.check_schema(schema)
    return {name: jsonschema.Draft202012Validator(schema) for name, schema in loaded.items()}


def _finite(value) -> bool:
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, dict):
        return all(_finite(v) for v in value.values())
    if isinstance(value, list):
        return all(_finite(v) for v in value)
    return True


def test_there_are_bundled_fixtures_to_validate():
    assert len(FIXTURES) >= 10


@pytest.mark.parametrize("path", FIXTURES, ids=[f"{p.parent.name}/{p.name}" for p in FIXTURES])
def test_every_bundled_case_file_validates(schemas, path):
    errors = list(schemas[CASE_FILE].iter_errors(strip_lines(load_file(path))))
    assert not errors, [f"{'.'.join(map(str, e.absolute_path))}: {e.message}" for e in errors[:5]]


def test_bundled_config_and_a_scaffolded_one_validate(schemas, tmp_path):
    assert not list(schemas[CONFIG_FILE].iter_errors(tomllib.loads((ROOT / "harness.toml").read_text())))
    assert not list(schemas[CONFIG_FILE].iter_errors(tomllib.loads(BASE_CONFIG)))
    assert main(["init", str(tmp_path / "proj")]) == 0
    assert not list(schemas[CONFIG_FILE].iter_errors(tomllib.loads((tmp_path / "proj" / "harness.toml").read_text())))


def _refused_for_its_shape(model, data) -> bool:
    """The pydantic model refuses ``data`` for something a JSON Schema can say too (not a rule
    only ``harness check`` enforces, such as finite numbers)."""
    try:
        model.model_validate(data)
        return False
    except ValidationError as exc:
        kinds = {e["type"] for e in exc.errors()}
    return not (kinds & NOT_IN_JSON_SCHEMA) and _finite(data)


def test_case_schema_rejects_what_the_model_rejects(schemas):
    """Every mutated case file the pydantic model refuses with a shape error, the exported schema
    refuses too (a file the loader refuses before any schema is left out)."""
    model = file_model()
    assert not list(schemas[CASE_FILE].iter_errors(strip_lines(loads(BASE_CASES))))
    compared = 0
    for mutant in case_mutants():
        if mutant.kind != "text":
            continue
        try:
            data = strip_lines(loads(mutant.text))
        except Exception:  # refused by the loader (bytes, depth, aliases, duplicates, syntax)
            continue
        if not _refused_for_its_shape(model, data):
            continue
        compared += 1
        assert list(schemas[CASE_FILE].iter_errors(data)), f"{mutant.name}: the JSON Schema accepts it"
    assert compared >= 60


def test_config_schema_rejects_what_the_model_rejects(schemas):
    compared = 0
    for mutant in config_mutants():
        if mutant.kind != "text" or mutant.env or mutant.args or mutant.setup:
            continue
        try:
            data = tomllib.loads(mutant.text)
        except (tomllib.TOMLDecodeError, RecursionError):
            continue
        if not _refused_for_its_shape(ConfigModel, data):
            continue
        compared += 1
        assert list(schemas[CONFIG_FILE].iter_errors(data)), f"{mutant.name}: the JSON Schema accepts it"
    assert compared >= 50


def test_schema_refuses_an_out_that_is_a_file(tmp_path, capsys):
    target = tmp_path / "file"
    target.write_text("x")
    assert main(["schema", "--out", str(target)]) == 2
    assert "is a file" in capsys.readouterr().err


def test_config_model_knows_exactly_the_keys_the_code_reads():
    """The schema and the modules that read each section agree (tests/test_docs.CONFIG_KEYS lists
    what the code reads): a key added to one is added to the other."""
    from harness import layer as layer_registry
    from harness.schema.models import config_model
    from tests.test_docs import CONFIG_KEYS

    full = config_model(layer_registry.config_sections())  # the engine's sections and the layers' own
    assert set(full.model_fields) == set(CONFIG_KEYS)
    for section, keys in CONFIG_KEYS.items():
        model = full.model_fields[section].annotation
        model = getattr(model, "__args__", (model,))[0]  # [storage] is optional
        assert set(model.model_fields) == keys, section


def test_suite_section_gives_the_default_fixtures_and_golden_folders(tmp_path, capsys):
    (tmp_path / "cases" / "robustness").mkdir(parents=True)
    (tmp_path / "cases" / "robustness" / "a.yaml").write_text(BASE_CASES)
    (tmp_path / "gold").mkdir()
    (tmp_path / "gold" / "VERSION").write_text("7\n")
    cfg = tmp_path / "harness.toml"
    cfg.write_text('[target]\nname = "x"\n')
    assert main(["check", "--config", str(cfg)]) == 2  # no fixtures/ next to the config
    assert "fixtures folder not found" in capsys.readouterr().err
    cfg.write_text('[target]\nname = "x"\n[suite]\nfixtures = "cases"\ngolden = "gold"\n')
    assert main(["check", "--config", str(cfg)]) == 0
    out = capsys.readouterr().out
    assert "2 cases would run" in out and f"goldens: {tmp_path / 'gold'} (version 7)" in out


def test_closed_choices_match_the_code():
    """The enumerations of the schema are the code's own lists (a new alert kind, storage
    addressing style, critic or embedding backend must be added to both)."""
    from typing import get_args

    from harness.night.alerts import KINDS
    from harness.sandbox.cassettes import MODES
    from harness.schema import models

    assert set(get_args(get_args(models.AlertsModel.model_fields["on"].annotation)[0])) == set(KINDS)
    assert set(get_args(models.SandboxModel.model_fields["llm_mode"].annotation)) == set(MODES)


def test_the_issue_21_keys_validate_in_the_exported_schemas(schemas, tmp_path):
    """`<check>: false`, `anomaly:`, `variants: all` in a case file and the robustness layer's own
    `[robustness] variants` in harness.toml are known to the editors' schemas; a wrong shape is not."""
    case_file = loads(
        "layer: multiturn\ncases:\n  - id: c\n    variants: all\n    turns:\n      - send: hi\n"
        "        expect: {replies: {min: 1}, no_leak: false, anomaly: {latency_ms: false}}\n"
        "      - callback: ok\n        expect: {replies: {min: 1}, callbacks_answered: false, anomaly: false}\n")
    assert not list(schemas[CASE_FILE].iter_errors(strip_lines(case_file)))
    assert list(schemas[CASE_FILE].iter_errors(strip_lines(loads(
        "layer: multiturn\ncases:\n  - id: c\n    send: hi\n    expect: {replies: {min: 1}, anomaly: 3}\n"))))
    for good in ('[robustness]\nvariants = "none"\n', '[robustness]\nvariants = ["typos", "case"]\n'):
        assert not list(schemas[CONFIG_FILE].iter_errors(tomllib.loads(good))), good
    assert list(schemas[CONFIG_FILE].iter_errors(tomllib.loads('[robustness]\nvariant = "none"\n')))


def _resolve(node: dict, defs: dict) -> dict:
    while "$ref" in node:
        node = defs[node["$ref"].rsplit("/", 1)[-1]]
    return node


def test_every_check_has_a_parameter_type_that_the_exported_schema_describes(schemas):
    """`harness schema` says what each registered check takes: its parameters' own type (no
    check is left as "any value"), every key of a table of parameters with its description."""
    from typing import Any

    from pydantic import BaseModel

    from harness.checks import GROUPED, REGISTRY

    schema = schemas[CASE_FILE].schema
    defs = schema["$defs"]
    expect = defs["Expect"]["properties"]
    for name, definition in sorted(REGISTRY.items()):
        assert definition.params is not None and definition.params is not Any, f"{name} has no parameter type"
        family, _, sub = name.partition(".")
        if sub and family in GROUPED:
            node = _resolve(expect[family], defs)
            node = _resolve(next(m for m in node.get("anyOf", [node]) if "$ref" in m or "properties" in m), defs)
            node = node["properties"][sub]
        else:
            node = expect[name]
        members = [_resolve(m, defs) for m in node.get("anyOf", [node])]
        described = [m for m in members if m.get("const") is not False]
        assert described and all(m for m in described), f"{name}: the schema says nothing of its parameters"
        model = definition.params if isinstance(definition.params, type) and issubclass(
            definition.params, BaseModel) else None
        if model is not None:
            props = next(m for m in described if m.get("properties"))["properties"]
            assert set(props) == {f.alias or k for k, f in model.model_fields.items()}, name
            assert all(p.get("description") for p in props.values()) or name == "reply.entities", (
                f"{name}: a key without a description")
    # the baseline.* checks take their parameters from the case's baseline: key
    case = defs["Case"]["properties"]["baseline"]
    def members(node):
        node = _resolve(node, defs)
        return [m for sub in node["anyOf"] for m in members(sub)] if "anyOf" in node else [node]

    kinds = next(m for m in members(case) if m.get("properties"))
    from harness.checks.baseline import KINDS

    assert set(KINDS) <= set(kinds["properties"])


@pytest.mark.parametrize("expect,valid", [
    ({"replies": {"min": 1}}, True), ({"replies": {"min": -1}}, False), ({"replies": {"mni": 1}}, False),
    ({"reply": {"regex": "(?i)ok"}}, True), ({"reply": {"regex": 3}}, False),
    ({"reply": {"language": "en"}}, True), ({"reply": {"language": "english"}}, False),
    ({"error_rate": {"max": 0.5}}, True), ({"error_rate": {"max": 2}}, False),
    ({"tool_order": ["a", "b"]}, True), ({"tool_order": ["a"]}, False),
    ({"answered": False}, True), ({"answered": "yes"}, False),
    ({"state": {"$.a": None}}, True), ({"slots": {"document": "x.pdf"}}, True),
])
def test_the_exported_schema_checks_check_parameters(schemas, expect, valid):
    """An editor with the schema sees a wrong parameter as the loader does (its right twin passes)."""
    data = {"layer": "robustness", "cases": [{"id": "a", "send": "hi", "expect": expect}]}
    assert (not list(schemas[CASE_FILE].iter_errors(data))) is valid
