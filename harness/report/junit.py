"""junit.xml: the run as CI systems read it.

One ``<testsuite>`` per layer, one ``<testcase>`` per case. Statuses map onto JUnit's
four outcomes without ever inflating passes: ``fail`` -> ``<failure>``, ``error`` ->
``<error>``, ``unavailable`` -> ``<error type="unavailable">`` (a case whose judge was down is
not a pass, and the run exits 1 for it: the test tab agrees with the job), ``skipped`` (a budget
or ``--maxfail`` stop) -> ``<skipped>``, ``soft`` -> a pass with the soft evidence in ``<system-out>``, since the
run-level soft budget, not the single case, decides whether soft errors fail the night.

Agent output goes into the XML, so every string is stripped of the characters XML 1.0
cannot carry at all (ElementTree escapes the rest).
"""

from __future__ import annotations

import os
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any, Mapping

from harness.report.jsonfile import as_report_dict
from harness.fileio import atomic_write_text
from harness.report.format import failing_evidence, headline, soft_evidence, unavailable_evidence
from harness.types import RunReport

#: Characters XML 1.0 forbids even as references; an agent can emit any of them.
_XML_ILLEGAL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
MESSAGE_CHARS = 500


def xml_text(value: Any) -> str:
    """``value`` as text that can go into XML (forbidden control characters removed) and be shown
    on a terminal (a CI log that prints junit.xml): terminal control sequences, C1 ones too, are
    removed whole (``harness.redact.strip_sequences``)."""
    from harness.redact import strip_sequences

    return _XML_ILLEGAL.sub("", strip_sequences("" if value is None else str(value)))


def _case_seconds(case: Mapping[str, Any]) -> float:
    # Wall time of the case when known; else the reply latency; a case that never ran is 0.
    ms = case.get("duration_ms")
    if ms is None:
        ms = case.get("latency_ms")
    return max(float(ms or 0.0), 0.0) / 1000.0


def _evidence_block(items: list[Mapping[str, Any]]) -> str:
    lines = []
    for e in items:
        turn = e.get("turn")
        lines.append(
            f"- check: {e.get('check', '')}\n"
            f"  turn: {'case' if turn is None else turn}\n"
            f"  expected: {e.get('expected', '')}\n"
            f"  observed: {e.get('observed', '')}\n"
            f"  reason: {e.get('reason', '')}\n"
            f"  evaluator: {e.get('evaluator', '')} ({e.get('source', '')})"
        )
    return "\n".join(lines)


def _transcript(case: Mapping[str, Any]) -> str:
    """What was sent and what came back, for a failing case's ``<system-out>``."""
    lines = []
    for t in case.get("turns") or ():
        sent = t.get("sent")
        lines.append(f"turn {t.get('index')}: sent {sent!r}" if sent is not None else f"turn {t.get('index')}")
        if t.get("delivery_error"):
            lines.append(f"  delivery failed: {t['delivery_error']}")
        if t.get("timed_out"):
            lines.append("  timed out before the turn settled")
        for r in t.get("replies") or ():
            lines.append(f"  reply [{r.get('method')}]: {r.get('text', '')}")
        for c in t.get("calls") or ():
            err = f" error={c['error']}" if c.get("error") else ""
            lines.append(f"  call {c.get('source')}:{c.get('name')} -> {c.get('status')}{err}")
    return "\n".join(lines)


def _sub(parent: ET.Element, tag: str, text: str = "", **attrs: Any) -> ET.Element:
    el = ET.SubElement(parent, tag, {k: xml_text(v) for k, v in attrs.items()})
    if text:
        el.text = xml_text(text)
    return el


def _testcase(suite: ET.Element, case: Mapping[str, Any]) -> str:
    """Append one ``<testcase>``; returns its JUnit outcome (pass/failure/error/skipped)."""
    el = _sub(suite, "testcase",
              classname=f"{case.get('layer', '')}.{case.get('channel', '')}",
              name=case.get("id", ""),
              time=f"{_case_seconds(case):.3f}")
    if case.get("file"):
        el.set("file", xml_text(case["file"]))
    status = case.get("status")
    message = headline(case, MESSAGE_CHARS)
    if status == "fail":
        items = failing_evidence(case)
        _sub(el, "failure", _evidence_block(items) or message, message=message, type="fail")
        outcome = "failure"
    elif status == "error":
        body = case.get("error") or ""
        if failing_evidence(case):
            body = (body + "\n" if body else "") + _evidence_block(failing_evidence(case))
        _sub(el, "error", body or message, message=message, type="error")
        outcome = "error"
    elif status == "unavailable":
        # undecided is not passed, and the run's exit code says so (1): a red test, not a grey one
        body = _evidence_block(unavailable_evidence(case))
        _sub(el, "error", body or message, message=message, type="unavailable")
        outcome = "error"
    elif status == "skipped":
        _sub(el, "skipped", case.get("error") or "", message=message)
        outcome = "skipped"
    else:
        outcome = "pass"
        if status == "soft":
            _sub(el, "system-out", "soft error (inside the soft band; re-evaluated once):\n"
                 + _evidence_block(soft_evidence(case)))
    if outcome in ("failure", "error"):
        transcript = _transcript(case)
        if transcript:
            _sub(el, "system-out", transcript)
    return outcome


def build_junit(report: RunReport | Mapping[str, Any]) -> ET.Element:
    """The ``<testsuites>`` element for a report (or its results.json dict)."""
    d = as_report_dict(report)
    cases = d.get("cases") or []
    # Suites in the report's layer order, then any layer only the cases mention.
    layer_names = list(d.get("layers") or {})
    layer_names += [c.get("layer", "") for c in cases if c.get("layer", "") not in layer_names]
    layer_names = list(dict.fromkeys(layer_names))

    root = ET.Element("testsuites", {"name": xml_text(f"harness {d.get('run_id', '')}")})
    totals = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0, "time": 0.0}
    for layer in layer_names:
        suite = _sub(root, "testsuite", name=layer, timestamp=d.get("started_at", ""))
        props = _sub(suite, "properties")
        for key, value in (("run_id", d.get("run_id")), ("target", (d.get("target") or {}).get("name")),
                           ("golden_version", d.get("golden_version")),
                           ("verdict", (d.get("summary") or {}).get("verdict"))):
            if value:
                _sub(props, "property", name=key, value=value)
        counts = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0, "time": 0.0}
        for case in cases:
            if case.get("layer", "") != layer:
                continue
            outcome = _testcase(suite, case)
            counts["tests"] += 1
            counts["time"] += _case_seconds(case)
            if outcome in ("failure", "error"):
                counts[outcome + "s"] += 1
            elif outcome == "skipped":
                counts["skipped"] += 1
        for key, value in counts.items():
            suite.set(key, f"{value:.3f}" if key == "time" else str(value))
            totals[key] += value
    for key, value in totals.items():
        root.set(key, f"{value:.3f}" if key == "time" else str(value))
    return root


def render_junit(report: RunReport | Mapping[str, Any]) -> str:
    """The junit.xml text."""
    root = build_junit(report)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def write_junit(report: RunReport | Mapping[str, Any], path: str | os.PathLike[str]) -> Path:
    """Write junit.xml atomically; returns the path."""
    return atomic_write_text(path, render_junit(report))
