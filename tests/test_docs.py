"""The docs cannot drift from the code: every config key the code accepts is in docs/CONFIG.md,
every check name in the registry is in docs/CASES.md.

A key counts as documented when it appears in backticks (```key```) in CONFIG.md, and its
environment override ``HARNESS_<SECTION>_<KEY>`` follows from the documented rule; a check
name when it appears in backticks in CASES.md.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from harness.checks import REGISTRY
from harness.config import all_sections
from harness.schema import models

DOCS = Path(__file__).resolve().parent.parent / "docs"


def _backticked(path: Path) -> set[str]:
    """Every ``word`` in backticks (a table cell may hold several)."""
    text = path.read_text(encoding="utf-8")
    return {m.strip() for span in re.findall(r"`([^`\n]+)`", text) for m in re.split(r"[\s,/]+", span) if m}


def _keys(model: type) -> set[str]:
    return set(model.model_fields)


#: Each engine section is its model (harness/schema/models.py): the code reads the model's fields.
CONFIG_KEYS: dict[str, set[str]] = {
    "target": _keys(models.TargetModel),
    "sandbox": _keys(models.SandboxModel),
    "embeddings": _keys(models.EmbeddingsModel),
    "critic": _keys(models.CriticModel),
    "budget": _keys(models.BudgetModel),
    "alerts": _keys(models.AlertsModel),
    "storage": _keys(models.StorageModel),
    "schedule": _keys(models.ScheduleModel),
    "suite": _keys(models.SuiteModel),
    "baseline": _keys(models.BaselineModel),
    "robustness": {"variants"},  # read by layers/variants.derive
}


def test_every_section_is_covered_here():
    assert set(CONFIG_KEYS) == set(all_sections())


@pytest.mark.parametrize("section", sorted(CONFIG_KEYS))
def test_config_keys_are_documented(section):
    text = (DOCS / "CONFIG.md").read_text(encoding="utf-8")
    documented = _backticked(DOCS / "CONFIG.md")
    assert f"[{section}]" in text, f"docs/CONFIG.md has no [{section}] section"
    missing = sorted(k for k in CONFIG_KEYS[section] if k not in documented and f"[target.{k}]" not in text)
    assert not missing, f"[{section}] keys missing from docs/CONFIG.md: {missing}"


def test_override_rule_and_secret_variables_are_documented():
    text = (DOCS / "CONFIG.md").read_text(encoding="utf-8")
    assert "HARNESS_<SECTION>_<KEY>" in text
    for name in ("HARNESS_BOT_TOKEN", "HARNESS_WEBHOOK_SECRET", "HARNESS_APP_SECRET", "HARNESS_VERIFY_TOKEN",
                 "HARNESS_WHATSAPP_TOKEN", "HARNESS_LLM_API_KEY", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        assert name in text, f"{name} missing from docs/CONFIG.md"


def test_placeholders_are_documented():
    from harness.cases.keys import GENERATORS, PLACEHOLDERS

    config = (DOCS / "CONFIG.md").read_text(encoding="utf-8")
    cases = (DOCS / "CASES.md").read_text(encoding="utf-8")
    for name in PLACEHOLDERS:
        assert "{" + name + "}" in config, f"{{{name}}} missing from docs/CONFIG.md"
        assert "{" + name + "}" in cases, f"{{{name}}} missing from docs/CASES.md"
    for name in GENERATORS:
        assert "{" + name + ":N}" in cases


def test_every_check_is_documented_in_cases_md():
    documented = _backticked(DOCS / "CASES.md")
    missing = sorted(name for name in REGISTRY if name not in documented)
    assert not missing, f"checks missing from docs/CASES.md: {missing}"


def test_docs_index_links_every_doc():
    index = (DOCS / "README.md").read_text(encoding="utf-8")
    missing = sorted(p.name for p in DOCS.glob("*.md") if p.name != "README.md" and f"({p.name})" not in index)
    assert not missing, f"docs/README.md does not link {missing}"


def test_every_baseline_check_is_documented_in_cases_md():
    from harness.checks.baseline import CHECKS as BASELINE_CHECKS

    documented = _backticked(DOCS / "CASES.md")
    assert sorted(name for name in BASELINE_CHECKS if name not in documented) == []

def test_changelog_keeps_unreleased_on_top_and_a_migration_for_every_change():
    text = (DOCS.parent / "CHANGELOG.md").read_text(encoding="utf-8")
    headings = re.findall(r"^## (.+)$", text, flags=re.M)
    assert headings and headings[0] == "Unreleased"
    bullets = re.split(r"\n(?=- \*\*)", text.split("## Unreleased", 1)[1])[1:]
    assert bullets and all("**Migration:**" in b for b in bullets), [b[:80] for b in bullets if "**Migration:**" not in b]


def test_the_check_parameters_table_is_generated_from_the_registry():
    """docs/CASES.md "Check parameters" is exactly what the checks' own types say (one row a check)."""
    from harness.checks import KEY_PARAMS
    from harness.checks.params import BEGIN, END, docs_table

    text = (DOCS / "CASES.md").read_text(encoding="utf-8")
    assert BEGIN in text and END in text, "docs/CASES.md lost its generated check-parameters table"
    written = text[text.index(BEGIN):text.index(END) + len(END)]
    generated = docs_table(REGISTRY, KEY_PARAMS)
    assert written == generated, (
        "docs/CASES.md's check-parameters table differs from the registry: regenerate it with "
        "python -c \"from harness.checks import KEY_PARAMS, REGISTRY; from harness.checks.params import docs_table; "
        "print(docs_table(REGISTRY, KEY_PARAMS))\"")
    named = {line.split("`")[1].rstrip(":") for line in generated.splitlines() if line.startswith("| `")}
    assert named == set(REGISTRY) | {"baseline"}
