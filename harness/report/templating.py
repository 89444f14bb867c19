"""The one Jinja2 environment every page is rendered with (report.html, calibration.html,
judges.html and their fragments, under ``harness/report/templates/``).

Autoescape is on and every ``{{ value }}`` goes through ``finalize`` first: ``None`` prints
as nothing (never "None"), a ``Markup`` value passes as it is, anything else is escaped with
``html.escape(quote=True)`` (the escaping the pages always had, so ``'`` stays ``&#x27;``), its
terminal control sequences and control characters removed first (``harness.redact.inert``).
Undefined names raise (``StrictUndefined``): a template that misspells a field fails its test
instead of printing an empty cell. Only ``Markup`` passes raw, and only two things make it:
a fragment this module rendered (``fragment``) and a plugin layer's deprecated HTML string
(``harness.report.html.layer_sections``).
"""

from __future__ import annotations

import html
from functools import lru_cache
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined
from markupsafe import Markup  # jinja2's own dependency; imported from here by the report modules

from harness.redact import inert


def _finalize(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, Markup) or hasattr(value, "__html__"):
        return value
    # inert: a control sequence the agent put in a reply, a target name... is no character of an
    # HTML page (and reaches a terminal when the page is cat'ed or grepped)
    return Markup(html.escape(inert(str(value)), quote=True))


@lru_cache(maxsize=1)
def env() -> Environment:
    """Built once per process (templates are compiled on first use and cached)."""
    from harness.report.jsonfile import STATUSES

    environment = Environment(loader=PackageLoader("harness", "report/templates"), autoescape=True,
                              undefined=StrictUndefined, finalize=_finalize, trim_blocks=True, lstrip_blocks=True,
                              keep_trailing_newline=True)
    environment.globals["STATUSES"] = STATUSES  # the statuses a badge has a colour for
    return environment


def render(template: str, /, **values: Any) -> str:
    """A whole page (or a fragment a caller keeps as text)."""
    return env().get_template(template).render(**values)


def fragment(template: str, /, **values: Any) -> Markup:
    """A fragment to insert into another template: already escaped, so it is ``Markup``."""
    return Markup(render(template, **values))


__all__ = ["Markup", "env", "fragment", "render"]
