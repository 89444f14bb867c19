"""JSON Schema of harness.toml and of case files (``harness schema [--out DIR]``).

Editors use them to validate and complete as you type: YAML through the yaml-language-server
modeline (``# yaml-language-server: $schema=<path>/harness-case.schema.json`` on a case file's
first line), TOML through Taplo's ``#:schema <path>/harness-config.schema.json`` (docs/CASES.md,
docs/CONFIG.md). The schema says what shape values have, every check's parameters included
(their types, enumerations, bounds, descriptions and examples, from ``CheckDef.params``);
``harness check`` also checks what a schema cannot (a regex that compiles, placeholders,
files that must exist, users and turns).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from harness.schema.models import config_model

CASE_FILE = "harness-case.schema.json"
CONFIG_FILE = "harness-config.schema.json"
DRAFT = "https://json-schema.org/draft/2020-12/schema"


def json_schema(model: type[BaseModel], title: str, description: str) -> dict[str, Any]:
    schema = model.model_json_schema(by_alias=True, mode="validation")
    return {"$schema": DRAFT, "title": title, "description": description, **{
        k: v for k, v in schema.items() if k not in ("title", "description")}}


def config_schema() -> dict[str, Any]:
    from harness import layer as layer_registry  # the layers' own sections ([robustness] variants)

    return json_schema(config_model(layer_registry.config_sections()), "harness.toml", "Configuration of the harness (docs/CONFIG.md).")


def case_schema(case_model: type[BaseModel]) -> dict[str, Any]:
    return json_schema(case_model, "harness case file",
                       "One file of fixtures/<layer>/: a layer's cases (docs/CASES.md).")


def write_schemas(out: Path, case_model: type[BaseModel]) -> list[Path]:
    """Write both schemas into ``out`` (created); the paths written."""
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, schema in ((CASE_FILE, case_schema(case_model)), (CONFIG_FILE, config_schema())):
        path = out / name
        path.write_text(json.dumps(schema, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        written.append(path)
    return written
