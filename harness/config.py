"""harness.toml and its environment overrides.

Every key can be overridden as ``HARNESS_<SECTION>_<KEY>`` (``HARNESS_TARGET_READY_URL``,
``HARNESS_SANDBOX_SETTLE_S``). Secrets never live in the file: the sandbox's own
credentials (bot token, webhook secret, app secret) are generated per run unless given
in the environment, and provider keys come only from the environment.
"""

from __future__ import annotations

import os
import re
import secrets
import sys
import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Mapping

from pydantic import BaseModel, ValidationError

from harness import layer as layer_registry
from harness.errors import ConfigError
from harness.schema.files import InputProblem, read_text
from harness.schema.models import ConfigModel, SandboxModel, TargetModel, config_field_type, config_model
from harness.schema.problems import path_text, problems

#: The engine's sections; each layer may add its own, ``[<layer name>]`` (``Layer.settings``).
SECTIONS = tuple(ConfigModel.model_fields)


def all_sections() -> tuple[str, ...]:
    """The engine's sections, then the layers' own."""
    return SECTIONS + tuple(s for s in layer_registry.config_sections() if s not in SECTIONS)

#: Key names that would hold a secret; they are refused in the file.
SECRET_WORDS = ("token", "secret", "password", "api_key", "access_key", "secret_key")
#: Keys that look secret but are not (they name where to find things).
NOT_SECRET = {"token_env", "api_key_env", "verify_token_env",
              "tokens", "tokens_tolerance", "tokens_slack",  # [baseline]: token counts, not tokens
              "anomaly_min_tokens"}  # [budget] likewise (it was refused as a secret)


@dataclass(frozen=True)
class Secrets:
    """Per-run credentials of the sandbox; never written to any output."""

    bot_token: str
    webhook_secret: str
    app_secret: str
    verify_token: str
    whatsapp_token: str


@dataclass(frozen=True)
class Config:
    """The whole configuration. Its sections are ``settings``, harness.toml's frozen pydantic
    model (``harness.schema.models.config_model``: one definition per section, validated once
    here); ``config.target`` and ``config.sandbox`` are the two every module reads."""

    path: Path | None
    root: Path
    """Directory paths in the config are relative to."""
    secrets: Secrets
    sections: Mapping[str, Mapping[str, Any]]
    """Raw tables of every section after the environment overrides (the layers read their own
    sections from here; the manifest hashes them)."""
    settings: Any
    """Every section as its model: ``settings.budget``, ``settings.storage`` (None: no
    ``[storage]``), a layer's ``settings.<layer name>``."""
    origins: Mapping[tuple, str] = field(default_factory=dict)
    """``(section, key)`` -> the environment variable that set it (``from_environment``)."""

    def from_environment(self, exc: ConfigError) -> ConfigError:
        """``exc`` (about ``[section] key``) naming the environment variable when one set that key."""
        return env_attributed(exc, self.origins)

    @property
    def target(self) -> TargetModel:
        return self.settings.target

    @property
    def sandbox(self) -> SandboxModel:
        return self.settings.sandbox

    def with_sections(self, **models: BaseModel) -> "Config":
        """A copy with some sections replaced (``config.with_sections(target=...)``)."""
        return replace(self, settings=self.settings.model_copy(update=models))

    def resolve(self, p: str) -> Path:
        path = Path(p)
        return path if path.is_absolute() else self.root / path

    def fixtures_dir(self) -> Path:
        """``[suite] fixtures`` (default ``fixtures``), relative to the config file: --fixtures's default."""
        return self.resolve(self.settings.suite.fixtures or "fixtures")

    def golden_dir(self) -> Path:
        """``[suite] golden`` (default ``golden``), relative to the config file: --golden's default."""
        return self.resolve(self.settings.suite.golden or "golden")


def env_attributed(exc: ConfigError, origins: Mapping[tuple, str]) -> ConfigError:
    """A ConfigError about ``[section] key`` (raised by a layer's or a validator's own code, not by
    the schema) that names the environment variable when one set that key, not harness.toml."""
    m = re.match(r"\[(\w+)\] (\w+)", exc.message or "")
    name = origins.get((m.group(1), m.group(2))) if m else None
    if name and name not in exc.message:
        exc.message += f" (from the environment variable {name})"
        exc.fix = f"set {name} to a valid value ({exc.fix})" if exc.fix else f"set {name} to a valid value"
        exc.line = None
        exc.args = (exc.render(),)
    return exc


def config_section(config: Any, name: str) -> Any:
    """``[name]`` of ``config`` as its model: a loaded Config's own, or (for a stand-in with only
    raw ``sections``, e.g. a test's) validated from the raw table, a problem a ConfigError."""
    settings = getattr(config, "settings", None)
    if isinstance(settings, BaseModel):
        return getattr(settings, name)
    raw = (getattr(config, "sections", None) or {}).get(name)
    if name == "storage" and not raw:
        return None
    model = config_model().model_fields[name].annotation
    model = next(a for a in getattr(model, "__args__", (model,)) if a is not type(None))
    try:
        return model.model_validate(raw or {})
    except ValidationError as exc:
        first = problems(exc, raw or {})[0]
        head = f"[{name}] {path_text(first.loc)}".rstrip()
        raise ConfigError(f"{head}: {first.message}", file=str(getattr(config, "path", "") or ""),
                          fix=first.fix) from None


class EnvText(str):
    """A value that came from an environment variable: a typed key converts it itself, so
    ``HARNESS_TARGET_VERSION=1.10`` stays the string "1.10" instead of the float 1.1."""

    def parsed(self) -> Any:
        try:
            return tomllib.loads(f"v = {self}")["v"]
        except tomllib.TOMLDecodeError:
            return str(self)


def _env_overrides(data: dict[str, dict[str, Any]], environ: Mapping[str, str],
                   origins: dict[tuple, str] | None = None) -> None:
    """Apply ``HARNESS_<SECTION>_<KEY>`` variables; ``origins`` learns which variable set which key."""
    origins = {} if origins is None else origins
    for name, raw in environ.items():
        if not name.startswith("HARNESS_"):
            continue
        rest = name[len("HARNESS_"):].lower()
        for section in all_sections():
            if rest.startswith(section + "_"):
                key = rest[len(section) + 1:]
                if section == "target" and key.startswith("env_"):
                    # HARNESS_TARGET_ENV_FOO=bar sets FOO in [target.env] (names keep their case)
                    env_name = name[len("HARNESS_TARGET_ENV_"):]
                    table = data.setdefault("target", {})
                    table["env"] = {**table.get("env", {}), env_name: raw}
                    origins[("target", "env", env_name)] = name
                elif section in ("target", "sandbox"):
                    data.setdefault(section, {})[key] = EnvText(raw)  # the schema converts it to the key's type
                    origins[(section, key)] = name
                else:  # sections the layers read as plain tables get typed values
                    data.setdefault(section, {})[key] = EnvText(raw).parsed()
                    origins[(section, key)] = name
                break


def _check_no_secrets(table: Mapping[str, Any], where: str, file: str) -> None:
    for key, value in table.items():
        if isinstance(value, Mapping):
            if key == "env":  # target env values are placeholders or plain settings
                continue
            _check_no_secrets(value, f"{where}.{key}", file)
            continue
        low = key.lower()
        # ``*_env`` keys name the environment variable holding a secret (e.g. telegram_token_env)
        if low not in NOT_SECRET and not low.endswith("_env") and any(w in low for w in SECRET_WORDS):
            raise ConfigError(
                f"[{where}] {key}: secrets are not allowed in the config file",
                file=file,
                fix=f"keep the secret in an environment variable and name that variable instead "
                    f"(e.g. {key}_env = \"MY_{key.upper()}\" where the section supports it; see docs/CONFIG.md)",
            )


def _secrets(environ: Mapping[str, str]) -> Secrets:
    def get(name: str, make) -> str:
        return environ.get(name) or make()

    return Secrets(
        bot_token=get("HARNESS_BOT_TOKEN", lambda: f"{secrets.randbelow(9_000_000_000) + 1_000_000_000}:"
                      + secrets.token_urlsafe(26)[:35]),
        webhook_secret=get("HARNESS_WEBHOOK_SECRET", lambda: secrets.token_hex(16)),
        app_secret=get("HARNESS_APP_SECRET", lambda: secrets.token_hex(16)),
        verify_token=get("HARNESS_VERIFY_TOKEN", lambda: secrets.token_hex(12)),
        whatsapp_token=get("HARNESS_WHATSAPP_TOKEN", lambda: "EAAG" + secrets.token_urlsafe(40)),
    )


def load_config(path: str | os.PathLike | None = None, environ: Mapping[str, str] | None = None) -> Config:
    """Read ``path`` (default ``./harness.toml`` if present), apply env overrides, validate."""
    environ = os.environ if environ is None else environ
    file = ""
    text = ""
    data: dict[str, Any] = {}
    cfg_path: Path | None = None
    if path is None and Path("harness.toml").exists():
        path = "harness.toml"
    if path is not None:
        cfg_path = Path(os.path.realpath(path))  # a link loop stays a path; read_text names it
        file = str(path)
        if not cfg_path.exists() and not cfg_path.is_symlink():
            raise ConfigError("config file not found", file=file, fix="pass --config FILE or create harness.toml")
        try:
            text = read_text(cfg_path)
        except InputProblem as exc:
            raise ConfigError(exc.message, file=file, line=exc.line, fix=exc.fix) from None
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            at = re.search(r"\(at line (\d+), column \d+\)", str(exc))
            raise ConfigError(f"TOML syntax error: {exc}", file=file, line=int(at.group(1)) if at else None,
                              fix="correct the syntax at that line (a key is written once, a [section] once)") from None
        except RecursionError:
            raise ConfigError("TOML nested too deeply", file=file, fix="a config needs a few levels of tables and "
                              "lists; remove the deep nesting") from None
    for section in data:
        if section not in all_sections():
            raise ConfigError(f"unknown section [{section}]", file=file, fix=f"sections: {', '.join(all_sections())}")
        if not isinstance(data[section], dict):
            raise ConfigError(f"[{section}] must be a table", file=file,
                              fix=f"write it as a [{section}] section with its keys below it")
    for section in data:
        _check_no_secrets(data[section], section, file)
    origins: dict[tuple, str] = {}
    _env_overrides(data, environ, origins)
    root = cfg_path.parent if cfg_path else Path.cwd()
    try:
        settings = validate_data(data, file=file, text=text, root=root, origins=origins)
    except ConfigError as exc:  # a validator's own ConfigError about a key the environment set
        raise env_attributed(exc, origins) from None
    return Config(path=cfg_path, root=root, secrets=_secrets(environ), sections={k: v for k, v in data.items()},
                  settings=settings, origins=dict(origins))


def _typed_for_schema(data: Mapping[str, Any], origins: Mapping[tuple, str]) -> dict[str, Any]:
    """A copy of ``data`` with each value from the environment converted to its key's type."""
    out: dict[str, Any] = {}
    for section, table in data.items():
        if not isinstance(table, Mapping):
            out[section] = table
            continue
        copy = dict(table)
        for key, value in table.items():
            if (section, key) not in origins:
                continue
            if isinstance(value, str) and value.lstrip()[:1] in ("[", "{"):
                value = EnvText(value).parsed()  # HARNESS_TARGET_COMMAND='["python", "bot.py"]': an array
            if isinstance(value, (list, dict)):  # a TOML array or table from the environment, read as one
                copy[key] = value
                continue
            wanted = config_field_type(section, key, layer_registry.config_sections())
            if wanted is str or (wanted is not None and str in getattr(wanted, "__args__", ())):
                copy[key] = str(value)
            else:
                copy[key] = EnvText(str(value)).parsed() if isinstance(value, str) else value
        out[section] = copy
    return out


def _toml_line(text: str, loc: tuple) -> int | None:
    """The line of ``[section] key`` (or of the section) in the TOML text, if it can be found."""
    if not text or not loc:
        return None
    section, key = str(loc[0]), (str(loc[1]) if len(loc) > 1 and not isinstance(loc[1], int) else None)
    current = ""
    section_line = None
    for n, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if stripped.startswith("["):
            current = stripped.strip("[]").strip()
            if current == section:
                section_line = n
            if key and current == f"{section}.{key}":  # the key is a table of its own: [target.env]
                return n
            continue
        if key and current == section and stripped.split("=", 1)[0].strip().strip('"') == key and "=" in stripped:
            return n
    return section_line


def validate_data(data: Mapping[str, Any], *, file: str = "", text: str = "", root: Path | None = None,
                  origins: Mapping[tuple, str] | None = None) -> Any:
    """The whole config as ``harness.schema.models.config_model`` (the engine's sections and the
    layers' own), or every problem at once (file, line or environment variable, key, fix) in one
    ConfigError."""
    origins = origins or {}
    plain = _typed_for_schema(data, origins)
    try:
        return config_model(layer_registry.config_sections()).model_validate(
            plain, context={"root": root, "layers": layer_registry.names()} if root is not None
            else {"layers": layer_registry.names()})
    except ValidationError as exc:
        found = problems(exc, plain)
    lines = []
    for problem in found:
        loc = problem.loc
        head = f"[{loc[0]}] {path_text(loc[1:])}" if len(loc) > 1 else f"[{loc[0]}]" if loc else "config"
        env_name = origins.get(tuple(loc[:2])) or origins.get(tuple(loc[:3]))
        if env_name:
            where = f"from the environment variable {env_name}"
            fix = (f"unset {env_name} (no such key)" if problem.message.startswith("unknown key")
                   else f"set {env_name} to a valid value ({problem.fix})")
            line = None
        else:
            where, fix, line = "", problem.fix, _toml_line(text, loc)
        message = f"{head}: {problem.message}" + (f" ({where})" if where else "")
        lines.append((line, message, fix))
    if len(lines) == 1:
        line, message, fix = lines[0]
        raise ConfigError(message, file=file, line=line, fix=fix)
    body = "\n".join(f"  {file or 'config'}{':' + str(line) if line else ''}: {message}\n    fix: {fix}"
                     for line, message, fix in lines)
    raise ConfigError(f"{len(lines)} problems:\n{body}", file=file)


def python_command(command: tuple[str, ...]) -> list[str]:
    """``python`` as the first word means this interpreter (a venv's python, not the system's)."""
    cmd = list(command)
    if cmd and cmd[0] in ("python", "python3"):
        cmd[0] = sys.executable
    return cmd
