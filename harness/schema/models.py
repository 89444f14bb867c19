"""pydantic v2 models of harness.toml and of the case-file format (docs/CONFIG.md, docs/CASES.md).

They say what shape every value has: extra keys are refused, numbers are finite and in
range, enumerations are closed, ports are 0-65535, S3 bucket names follow the bucket rules,
files named by the config exist (relative to the config file; ``context={"root": Path}``).
``harness schema`` exports them as JSON Schema (``export.py``).

The config models (``Section`` and below) are the config itself: ``harness.config.load_config``
validates harness.toml with ``config_model`` and hands the frozen section models to the code
(``Config.target``, ``Config.settings.budget``...); there is no second definition of a section.
A field's docstring is its description in the exported JSON Schema (editors show it).
``harness.cases`` validates case files with the case models first, then builds its own objects.

The case model is built per suite (``case_file_model``) from what the caller knows: the
checks of the dispatch table with their parameters' types (``CheckDef.params``,
harness/checks/params.py) and the installed layers, so a plugin's checks and layers are
part of the schema without this module importing either, and a check's parameters are
validated, exported and documented from one type.
"""

from __future__ import annotations

import functools
import ipaddress
import re
from pathlib import Path
from typing import Annotated, Any, Literal, Mapping, Sequence

import pydantic
from pydantic import (AfterValidator, BaseModel, ConfigDict, Field, GetCoreSchemaHandler, GetJsonSchemaHandler,
                      PrivateAttr, ValidationInfo, create_model, field_validator, model_validator)
from pydantic_core import core_schema

from harness.types import CASE_ID_RE

#: Separates a validator's message from its fix (harness.schema.problems splits them).
FIX = " | fix: "

STRICT = ConfigDict(extra="forbid", strict=True, allow_inf_nan=False)

Seconds = Annotated[float, Field(gt=0, le=86_400, description="seconds, finite, > 0")]
Wait = Annotated[float, Field(ge=0, le=3_600, description="seconds, finite, >= 0")]
Port = Annotated[int, Field(ge=0, le=65535, description="a TCP port; 0 picks a free one")]
Fraction = Annotated[float, Field(ge=0, le=1)]
Positive = Annotated[float, Field(gt=0)]
NonNegative = Annotated[float, Field(ge=0)]
Count = Annotated[int, Field(ge=1)]
Strings = list[str] | str


class Strict(BaseModel):
    model_config = STRICT


def _texts(value: Any):
    if isinstance(value, str):
        yield value
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _texts(item)


class Section(Strict):
    """A harness.toml section: validated once at load, frozen, read by the code as it is."""

    model_config = ConfigDict(**STRICT, frozen=True, use_attribute_docstrings=True)

    @field_validator("*", mode="after")
    @classmethod
    def _no_nul(cls, value: Any) -> Any:
        # no path, URL, name or argument can carry a NUL: the OS refused it mid-run (exit 70)
        if any("\0" in text for text in _texts(value)):
            raise ValueError(f"{_cut(value)} holds a NUL character (\\0), which no path, URL or name can carry"
                             f"{FIX}remove the \\u0000 from the value")
        return value


def _cut(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


#: Placeholders that stand for a whole base URL, and the others (a port, an id) in a URL.
_URL_PLACEHOLDERS = ("telegram_api", "whatsapp_api", "llm_base_url", "anthropic_base_url", "docs", "tools_url")


def url_problem(value: str) -> str | None:
    """Why ``value`` is no http(s) URL the harness can call (None when it is one, or empty);
    ``{port}`` and the other placeholders are filled with stand-ins first."""
    from urllib.parse import urlsplit

    if not value:
        return None
    filled = re.sub(r"\{(\w+)\}", lambda m: "http://127.0.0.1:1" if m.group(1) in _URL_PLACEHOLDERS else "1", value)
    if any(c.isspace() for c in filled):
        return "holds white space"
    try:
        parts = urlsplit(filled)
        port = parts.port  # a port out of range or no number raises here (it crashed the run, exit 70)
    except ValueError as exc:
        return f"is no URL ({exc})"
    if parts.scheme not in ("http", "https"):
        return "is not an http:// or https:// URL"
    if not parts.hostname:
        return "names no host"
    if port == 0:
        return "names port 0, which no server listens on"
    return None


_URL_EXAMPLES = {"ready_url": "http://127.0.0.1:{port}/healthz", "telegram_webhook": "http://127.0.0.1:{port}/telegram",
                 "whatsapp_webhook": "http://127.0.0.1:{port}/whatsapp", "llm_upstream": "https://api.openai.com/v1",
                 "anthropic_upstream": "https://api.anthropic.com", "base_url": "https://api.groq.com/openai/v1",
                 "webhook_url": "https://hooks.slack.com/services/..."}


def _url(value: str, info: ValidationInfo) -> str:
    problem = url_problem(value)
    if problem:
        example = _URL_EXAMPLES.get(info.field_name or "", "http://127.0.0.1:{port}/")
        raise ValueError(f"{_cut(value)} {problem}{FIX}write an http(s) URL such as {info.field_name} = "
                         f"\"{example}\" (placeholders such as {{port}} are filled in; docs/CONFIG.md)")
    return value


#: A URL the harness calls: empty, or http(s) with a host and a valid port (placeholders allowed).
Url = Annotated[str, AfterValidator(_url)]


def _layer_problem(names: Any, info: ValidationInfo) -> str | None:
    """A layer name that no installed layer has (the config loader passes the known ones as context)."""
    known = (info.context or {}).get("layers")
    if not known:
        return None
    unknown = [n for n in names if n not in known]
    if unknown:
        return (f"{', '.join(map(repr, unknown))} {'is not a layer' if len(unknown) == 1 else 'are not layers'}"
                f"{FIX}write layers of {', '.join(known)}")
    return None


def _layers(value: tuple[str, ...], info: ValidationInfo) -> tuple[str, ...]:
    problem = _layer_problem(value, info)
    if problem:
        raise ValueError(problem)
    return value


def _tuple(value: Any) -> tuple[str, ...]:
    """A list of strings, or one string, as the tuple the code reads."""
    return (value,) if isinstance(value, str) else tuple(value)


#: A TOML list, a tuple in the code (strict mode takes only a tuple for a tuple).
Seq = Annotated[tuple[str, ...], pydantic.Strict(False)]
#: A list of strings in the file (one string is a list of one), a tuple in the code.
Names = Annotated[Seq | str, AfterValidator(_tuple)]


def _root(info: ValidationInfo) -> Path | None:
    ctx = info.context or {}
    return ctx.get("root")


def _is(path: Path, kind: str) -> bool:
    """``path`` exists and is a folder (``kind`` "folder") or something else ("file"); a path the
    system cannot look at (a name too long) is neither here: reading it says why later."""
    try:
        return path.is_dir() if kind == "folder" else (path.exists() and not path.is_dir())
    except (OSError, ValueError):
        return False


def _must_exist(value: str, info: ValidationInfo, what: str) -> str:
    root = _root(info)
    if value and root is not None:
        path = Path(value).expanduser()
        path = path if path.is_absolute() else Path(root) / path
        if not path.is_file():
            raise ValueError(f"{what} {value!r} is not a file (looked for {path})"
                             f"{FIX}create it, or correct the path (relative to the config file)")
    return value


# --------------------------------------------------------------------------- harness.toml


#: Linux's MAX_ARG_STRLEN: the longest single argument or NAME=value execve takes (bytes, with the NUL).
_MAX_ARG_BYTES = 131072


class TargetModel(Section):
    """``[target]``: the agent under test."""

    name: str = "target"
    """Shown in reports."""
    version: str = ""
    """Agent version; when empty, taken from the ready_url's JSON ``version`` if it has one."""
    command: Seq | str = Field(
        (), description="argv; started before the run (a string is split on white space)")
    """Started before the run and stopped after it; empty: the target is already running."""
    cwd: str = ""
    """Working directory for ``command`` (relative to the config file)."""
    port: Port | None = None
    """Fills ``{port}`` in URLs and env; 0 picks a free port."""
    ready_url: Url = ""
    """Polled until it answers 200."""
    ready_timeout_s: Seconds = 30.0
    telegram_webhook: Url = ""
    whatsapp_webhook: Url = ""
    state_url: str = ""
    """State probe, ``{chat_id}`` filled per case."""
    inprocess: str = Field("", pattern=r"^$|^[A-Za-z_][\w.]*:[A-Za-z_]\w*$", description="module:attr")
    """``module:attr``: a Python target served in the harness's own process (see targets.inprocess)."""
    env: dict[str, str | int | float | bool] = Field(default_factory=dict)
    """Passed to ``command`` with placeholders filled in (values as strings)."""

    @field_validator("env")
    @classmethod
    def _env_is_an_environment(cls, env: dict) -> dict:
        # what execve takes: a name without '=' or NUL, a value without NUL
        for name, value in env.items():
            if not name or "=" in name or "\0" in name:
                raise ValueError(f"environment variable name {name!r} may not be empty or hold '=' or a NUL")
            if isinstance(value, str) and "\0" in value:
                raise ValueError(f"the value of {name} holds a NUL character, which no environment can carry")
            if len(f"{name}={value}".encode("utf-8", "surrogatepass")) >= _MAX_ARG_BYTES:
                raise ValueError(f"{name} is over {_MAX_ARG_BYTES // 1024} KiB, more than the system lets one "
                                 "environment variable hold (the target could not start); pass a file's path instead")
        return env

    @field_validator("command")
    @classmethod
    def _command_has_no_nul(cls, command: tuple[str, ...] | str) -> tuple[str, ...]:
        for arg in [command] if isinstance(command, str) else command:
            if "\0" in arg:
                raise ValueError(f"command argument {arg!r} holds a NUL character")
            if len(arg.encode("utf-8", "surrogatepass")) >= _MAX_ARG_BYTES:
                raise ValueError(f"a command argument ({arg[:40]!r}...) is over {_MAX_ARG_BYTES // 1024} KiB, more than "
                                 "the system lets one argument hold (the target could not start); pass a file's path instead")
        return tuple(command.split()) if isinstance(command, str) else tuple(command)

    @field_validator("env", mode="after")
    @classmethod
    def _env_as_strings(cls, env: dict) -> dict[str, str]:
        return {str(k): str(v) for k, v in env.items()}

    @model_validator(mode="after")
    def _port_given(self) -> "TargetModel":
        # {port} is filled only when [target] port is set: a URL holding it literally crashed the run (exit 70)
        if self.port is None and not self.inprocess:
            keys = ("ready_url", "telegram_webhook", "whatsapp_webhook", "state_url") + (
                ("command", "env") if self.command else ())  # env reaches only a command the harness starts
            used = [key for key in keys
                    if "{port}" in " ".join(_texts(getattr(self, key))) + " ".join(
                        str(v) for v in (getattr(self, key).values() if key == "env" else ()))]
            if used:
                raise ValueError(f"{{port}} is used in {', '.join(used)} but port is not set, so it would stay the "
                                 f"text {{port}}{FIX}add port = 0 to [target] (a free port each run), or a fixed port")
        return self

    @model_validator(mode="after")
    def _state_url(self) -> "TargetModel":
        # an in-process target takes any non-empty state_url as "serve /state/{chat_id}"; another is called
        problem = None if self.inprocess else url_problem(self.state_url)
        if problem:
            raise ValueError(f"state_url {_cut(self.state_url)} {problem}{FIX}write an http(s) URL such as "
                             "http://127.0.0.1:{port}/state/{chat_id}")
        return self


class SandboxModel(Section):
    """``[sandbox]``: the loopback world the agent talks to."""

    llm_upstream: Url = ""
    """OpenAI-compatible base URL the gateway forwards to (``.../v1``); empty: the model double answers."""
    llm_upstream_key_env: str = "HARNESS_LLM_API_KEY"
    """Environment variable holding the upstream's API key (forwarded as a bearer token)."""
    anthropic_upstream: Url = ""
    """Anthropic Messages API root the gateway forwards ``/v1/messages`` to (e.g.
    ``https://api.anthropic.com``); empty: the model double answers Anthropic calls."""
    anthropic_upstream_key_env: str = "HARNESS_ANTHROPIC_API_KEY"
    """Environment variable holding the Anthropic key (sent as ``x-api-key``)."""
    docs_dir: str = "fixtures/documents"
    settle_s: Wait = 1.0
    """A turn ends once the agent was quiet this long (and the expected replies arrived)."""
    reply_timeout_s: Seconds = 20.0
    """Longest wait for a turn's expected replies."""
    case_timeout_s: Seconds = 120.0
    concurrency: Annotated[int, Field(ge=1, le=1000)] = 8
    whatsapp_api_version: str = Field("v21.0", pattern=r"^[A-Za-z0-9._-]{1,20}$")
    phone_number_id: str = Field("106540352242922", pattern=r"^\d{1,20}$")
    display_phone_number: str = Field("15550783881", pattern=r"^\+?\d{1,20}$")
    llm_mode: Literal["live", "record", "replay"] = "live"
    """live | record | replay: LLM calls forwarded, forwarded and recorded, or answered from
    the cassette only (harness/sandbox/cassettes.py)."""
    cassette: str = ""
    """The cassette file (JSONL) for record / replay, e.g. ``cassettes/nightly.jsonl``."""

    @model_validator(mode="after")
    def _cassette(self, info: ValidationInfo) -> "SandboxModel":
        if self.llm_mode != "live" and not self.cassette:
            raise ValueError(f'llm_mode = "{self.llm_mode}" needs a cassette path{FIX}cassette = "cassettes/nightly.jsonl"')
        return self

    @field_validator("docs_dir")
    @classmethod
    def _docs_folder(cls, value: str, info: ValidationInfo) -> str:
        root = _root(info)
        path = Path(value).expanduser() if value and "\0" not in value else None
        if path is not None and root is not None and not path.is_absolute():
            path = Path(root) / path
        if path is not None and root is not None and _is(path, "file"):
            raise ValueError(f"docs_dir {value!r} is a file, not a folder (looked at {path})"
                             f"{FIX}docs_dir names the folder the document server serves as {{docs}}")
        return value

    @field_validator("cassette")
    @classmethod
    def _replayed(cls, value: str, info: ValidationInfo) -> str:
        root = _root(info)
        if value and "\0" not in value and root is not None:
            path = Path(value).expanduser()
            path = path if path.is_absolute() else Path(root) / path
            if _is(path, "folder"):
                raise ValueError(f"cassette {value!r} is a folder, not a file (looked at {path})"
                                 f'{FIX}name a JSON-lines file, e.g. cassette = "cassettes/nightly.jsonl"')
        if info.data.get("llm_mode") == "replay" and value:
            try:
                _must_exist(value, info, "the replay cassette")
            except ValueError as exc:
                raise ValueError(str(exc).split(FIX)[0] + f'{FIX}record it first with llm_mode = "record"') from None
        return value


class EmbeddingsModel(Section):
    """``[embeddings]``: the similarity model (harness/models/settings.py)."""

    backend: Literal["minilm", "hash"] = "minilm"
    """minilm (all-MiniLM-L6-v2, offline) | hash (test double)."""
    threshold: Fraction = 0.75
    """Similarity passes at or above (per case: ``similarity.min``)."""
    fail_below: Fraction = 0.5
    """Similarity fails below; in between is a soft error."""
    cache_dir: str = ".harness-cache"
    """Golden/document embeddings and critic answers (relative to the config file)."""
    max_batch: Annotated[int, Field(ge=1, le=10_000)] = 64
    """The most texts in one batch."""
    max_wait_ms: Annotated[float, Field(ge=0, le=60_000)] = 0.0
    """From idle, wait this long for company (texts that arrive while the model encodes always
    go together in the next batch)."""

    @model_validator(mode="after")
    def _bands(self) -> "EmbeddingsModel":
        if not self.fail_below <= self.threshold:
            raise ValueError(f"needs 0 <= fail_below <= threshold <= 1, got fail_below = {self.fail_below} and "
                             f"threshold = {self.threshold}{FIX}e.g. threshold = 0.75, fail_below = 0.5")
        return self


class CriticModel(Section):
    """``[critic]``: the judge of factuality, rubrics and answers."""

    backend: Literal["offline", "openai", "anthropic"] = "offline"
    """offline | openai (any OpenAI-compatible server) | anthropic."""
    model: str = ""
    """E.g. "gpt-4o-mini", "llama-3.1-8b-instant", "claude-3-5-haiku-latest"."""
    base_url: Url = ""
    """Default per backend; Groq/OCI/vLLM/Ollama: their OpenAI-compatible ``/v1``."""
    api_key_env: str = ""
    """The environment variable holding the key (never the key itself)."""
    timeout_s: Seconds = 30.0
    max_retries: Annotated[int, Field(ge=0, le=20)] = 3
    """On 429 / 5xx / timeouts, honouring Retry-After."""
    fail_below: Fraction = 0.5
    """Rubric / answer scores below fail; [min, 1] pass; between: soft."""
    support_min: Fraction = 0.55
    """Offline critic: cosine at which a claim is supported..."""
    unsupported_below: Fraction = 0.35
    """...and below which it is unsupported (between: soft)."""
    max_source_chars: Annotated[int, Field(ge=1)] = 40000
    """LLM critics: the document is cut to this many characters."""

    @model_validator(mode="after")
    def _coherent(self) -> "CriticModel":
        if self.backend != "offline" and not self.model:
            raise ValueError(f"backend {self.backend!r} needs a model{FIX}model = \"gpt-4o-mini\"")
        if not self.unsupported_below <= self.support_min:
            raise ValueError(f"needs 0 <= unsupported_below <= support_min <= 1, got unsupported_below = "
                             f"{self.unsupported_below} and support_min = {self.support_min}"
                             f"{FIX}e.g. support_min = 0.55, unsupported_below = 0.35")
        return self


class BudgetModel(Section):
    """``[budget]``: money, anomalies, the soft budget and the diff's drift thresholds."""

    run_usd: Positive | None = None
    case_usd: Positive | None = None
    prices: str = ""
    simulated: bool | Literal["auto"] = "auto"
    anomaly_ratio: Positive = 1.5
    anomaly_window: Count = 7
    anomaly_min_latency_ms: NonNegative = 1000.0
    anomalies: bool = True
    anomaly_min_runs: Count = 5
    anomaly_mad_k: NonNegative = 3.0
    anomaly_min_tokens: NonNegative = 50.0
    anomaly_min_llm_calls: NonNegative = 1.0
    anomaly_min_cost_usd: NonNegative = 0.0
    anomaly_layers: Annotated[Seq, AfterValidator(_layers)] = ()
    """The layers whose cases are compared with history (empty: all)."""
    soft_max_fraction_per_layer: Fraction = 0.334
    """More soft cases than this share of a layer's decidable cases fail the layer (harness/soft.py)."""
    soft_max_per_run: Annotated[int, Field(ge=0)] = 2
    """More soft cases than this in the run fail it."""
    drift_similarity_ratio: NonNegative = 0.95
    drift_cost_ratio: NonNegative = 1.25
    drift_tokens_ratio: NonNegative = 1.25
    drift_latency_ratio: NonNegative = 1.5
    drift_latency_floor_ms: NonNegative = 250.0
    drift_flaky_nights: Annotated[int, Field(ge=0)] = 7
    drift_flaky_min_flips: Annotated[int, Field(ge=0)] = 3

    @field_validator("prices")
    @classmethod
    def _prices(cls, value: str, info: ValidationInfo) -> str:
        return _must_exist(value, info, "the prices file")


class AlertsModel(Section):
    """``[alerts]``: where budget breaches, regressions and failed starts are sent
    (harness/night/alerts.py). The three secrets (webhook URL, Telegram token, SMTP password)
    are never keys: ``<key>_env`` names the variable, and ``with_runtime`` puts the values
    in private attributes, which no repr, dump or schema shows."""

    on: Annotated[tuple[Literal["budget", "regression", "start_failed"], ...], pydantic.Strict(False)] = (
        "budget", "regression", "start_failed")
    report_base_url: str = ""
    """Links in alerts point here instead of at local paths."""
    webhook_url: Url = ""
    """Slack-compatible: POST {"text": ...} (a non-secret URL; else ``webhook_url_env``)."""
    webhook_url_env: str = ""
    telegram_chat_id: str | int = ""
    telegram_token_env: str = ""
    telegram_api_base: str = "https://api.telegram.org"
    smtp_host: str = ""
    smtp_port: Port = 587
    smtp_starttls: bool = True
    smtp_ssl: bool = False
    smtp_user: str = ""
    smtp_password_env: str = ""
    smtp_from: str = "harness@localhost"
    smtp_to: Names = ()
    oci_topic_id: str = ""
    oci_config_file: str = "~/.oci/config"
    oci_profile: str = "DEFAULT"
    retries: Tries = 3
    """Tries per channel (0 is one try)."""
    backoff_s: Wait = 1.0
    """Doubled after each failed try (plus jitter)."""
    timeout_s: Seconds = 10.0

    _webhook: str = PrivateAttr("")
    _telegram_token: str = PrivateAttr("")
    _smtp_password: str = PrivateAttr("")
    _oci_client: Any = PrivateAttr(None)

    @field_validator("telegram_chat_id", mode="after")
    @classmethod
    def _chat_as_text(cls, value: str | int) -> str:
        return str(value)

    @field_validator("telegram_api_base", mode="after")
    @classmethod
    def _no_trailing_slash(cls, value: str) -> str:
        return value.rstrip("/")

    def with_runtime(self, *, webhook_url: str = "", telegram_token: str = "", smtp_password: str = "",
                     oci_client: Any = None) -> "AlertsModel":
        """A copy holding the secrets read from the environment (and, in tests, an injected
        OCI client); the webhook URL from the environment wins over the file's."""
        copy = self.model_copy()
        copy._webhook, copy._telegram_token, copy._smtp_password = webhook_url, telegram_token, smtp_password
        copy._oci_client = oci_client
        return copy

    @property
    def webhook(self) -> str:
        """Where the webhook channel posts: the URL from ``webhook_url_env``, else ``webhook_url``."""
        return self._webhook or self.webhook_url

    @property
    def telegram_token(self) -> str:
        return self._telegram_token

    @property
    def smtp_password(self) -> str:
        return self._smtp_password

    @property
    def oci_client(self) -> Any:
        """Injected client (tests: a labelled fake); None builds ``oci.ons.NotificationDataPlaneClient``."""
        return self._oci_client


def _at_least_one(value: int) -> int:
    return max(1, value)


#: Tries of a remote call: 0 in the file is one try.
Tries = Annotated[int, Field(ge=0, le=20), AfterValidator(_at_least_one)]


_BUCKET = re.compile(r"^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$")


def bucket_problem(name: str) -> str | None:
    """Why ``name`` is not a valid S3 bucket name (AWS's rules, which OCI and MinIO share), or None."""
    if not _BUCKET.match(name):
        return ("3-63 characters of lowercase letters, digits, dots and hyphens, starting and ending "
                "with a letter or digit")
    if ".." in name or ".-" in name or "-." in name:
        return "no two dots in a row and no dot next to a hyphen"
    try:
        ipaddress.ip_address(name)
        return "not formatted as an IP address"
    except ValueError:
        pass
    if name.startswith(("xn--", "sthree-")) or name.endswith(("-s3alias", "--ol-s3")):
        return "no reserved prefix (xn--, sthree-) or suffix (-s3alias, --ol-s3)"
    return None


#: The longest key prefix: S3 keys are at most 1,024 bytes, and a run adds
#: ``/runs/YYYY/MM/DD/<run id, up to 100>/<file name>`` to it.
MAX_PREFIX_BYTES = 1024 - len("/runs/YYYY/MM/DD/") - 100 - len("/summary-github.md") - 32


class StorageModel(Section):
    """``[storage]``: S3-compatible object storage for runs (harness/night/storage.py)."""

    url: str = Field(..., description="s3://bucket/prefix")
    """``s3://bucket/prefix``."""
    endpoint_url: str = Field("", pattern=r"^$|^https?://\S+$")
    """Empty: AWS S3. OCI: ``https://<namespace>.compat.objectstorage.<region>.oraclecloud.com``."""
    region: str = ""
    addressing_style: Literal["auto", "path", "virtual"] = "auto"
    """``path`` for OCI and MinIO; ``virtual`` or ``auto`` for AWS."""
    retries: Tries = 3
    """Tries per object before the upload is left in the spool (0 is one try)."""
    retry_backoff_s: Wait = 1.0
    """Wait before the second try; doubled before each next one."""
    timeout_s: Seconds = 30.0
    """Connect and read timeout of one request."""

    @property
    def bucket(self) -> str:
        return self.url[len("s3://"):].split("/", 1)[0]

    @property
    def prefix(self) -> str:
        """Without leading or trailing slash; may be empty."""
        return self.url[len("s3://"):].partition("/")[2].strip("/")

    def key(self, *parts: str) -> str:
        return "/".join(p.strip("/") for p in (self.prefix, *parts) if p and p.strip("/"))

    @field_validator("url")
    @classmethod
    def _url(cls, value: str) -> str:
        m = re.fullmatch(r"s3://([^/]+)/?(.*)", value)
        if not m:
            raise ValueError(f"url {value!r} is not s3://bucket/prefix{FIX}url = \"s3://nightly-evals/chatbot\"")
        problem = bucket_problem(m.group(1))
        if problem:
            raise ValueError(f"bucket name {m.group(1)!r} is not valid: {problem}"
                             f"{FIX}a bucket name such as nightly-evals (url = \"s3://nightly-evals/chatbot\")")
        prefix = m.group(2)
        bad = next((why for test, why in (
            (any(part in (".", "..") for part in prefix.split("/")), "holds a '.' or '..' segment"),
            ("//" in prefix.strip("/"), "holds an empty segment ('//')"),
            (any(c in prefix for c in "?#"), "holds '?' or '#' (a query or fragment is no part of a key)"),
            (any(ord(c) < 32 or ord(c) == 127 for c in prefix), "holds a control character"),
            ("\\" in prefix, "holds a backslash"),
            (len(prefix.encode("utf-8", "surrogatepass")) > MAX_PREFIX_BYTES,
             f"is {len(prefix.encode('utf-8', 'surrogatepass')):,} bytes: S3 keys are at most 1,024 bytes, and a run's "
             f"keys add up to {1024 - MAX_PREFIX_BYTES} to the prefix (at most {MAX_PREFIX_BYTES} bytes)")) if test), None)
        if bad:
            raise ValueError(f"the prefix {_cut(prefix)} of url {_cut(value)} {bad}"
                             f"{FIX}a plain key prefix such as url = \"s3://nightly-evals/chatbot/nightly\"")
        return value


_CRON_FIELDS = ("minute", "hour", "day-of-month", "month", "day-of-week")


#: The most days each month can have (February: a leap year's).
_MONTH_DAYS = {1: 31, 2: 29, 3: 31, 4: 30, 5: 31, 6: 30, 7: 31, 8: 31, 9: 30, 10: 31, 11: 30, 12: 31}


def cron_problem(expr: str) -> str | None:
    """Why ``expr`` is not a five-field crontab expression (minute hour day month weekday), or None.

    cronsim parses it, the library that computes the scheduler's fire times, so what passes
    here is what the daemon can run (``0 2 * * 7`` and ``mon#1`` included, ``0 2 30 2 *`` not).
    """
    from datetime import datetime, timezone

    from cronsim import CronSim, CronSimError

    parts = expr.split()
    if len(parts) != 5:
        return f"has {len(parts)} fields; crontab has 5 (minute hour day month weekday)"
    try:
        CronSim(" ".join(parts), datetime.now(timezone.utc))
    except CronSimError as exc:
        days, months = parts[2], parts[3]
        if (re.fullmatch(r"\d+(,\d+)*", days) and all(1 <= int(d) <= 31 for d in days.split(","))
                and re.fullmatch(r"\d+(,\d+)*", months) and parts[4] == "*"):
            longest = max(_MONTH_DAYS.get(int(m), 0) for m in months.split(","))
            if min(int(d) for d in days.split(",")) > longest:  # a date no calendar has: the daemon would wait forever
                return (f"never fires: no month {months} has day {days} (the scheduler would wait forever)")
        field = next((i for i, name in enumerate(_CRON_FIELDS) if name in str(exc)), None)
        where = f"{_CRON_FIELDS[field]} field {parts[field]!r}" if field is not None else repr(expr)
        return f"{where}: {exc} (crontab(5): *, N, N-M, */S, lists, names; 0 and 7 are Sunday)"
    return None


def zone_problem(tz: str) -> str | None:
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    try:
        ZoneInfo(tz)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        return f"{tz!r} is not a known IANA time zone (e.g. Europe/Madrid, UTC)"
    return None


class ScheduleModel(Section):
    """``[schedule]``: when the nightly cycle fires and the ``harness run`` options it uses."""

    cron: str = "0 2 * * *"
    tz: str = "UTC"
    layers: Annotated[Names, AfterValidator(_layers)] = ()
    """Empty: all layers."""
    cases: Names = ()
    concurrency: Annotated[int, Field(ge=1, le=1000)] | None = None
    repeat: Annotated[int, Field(ge=1, le=1000)] = 1
    out: str = ""
    """Reports folder (default: reports/ next to the config)."""
    upload: bool | None = None
    """None: upload when [storage] is configured."""
    fixtures: str = ""
    golden: str = ""
    budget_usd: NonNegative | None = None

    @field_validator("cron")
    @classmethod
    def _cron(cls, value: str) -> str:
        problem = cron_problem(value)
        if problem:
            raise ValueError(f"cron {value!r} {problem}{FIX}five fields: minute hour day month weekday, "
                             "e.g. \"0 2 * * *\"")
        return value

    @field_validator("tz")
    @classmethod
    def _tz(cls, value: str) -> str:
        problem = zone_problem(value)
        if problem:
            raise ValueError(f"{problem}{FIX}an IANA name, e.g. Europe/Madrid or UTC")
        return value


class SuiteModel(Section):
    """``[suite]``: where the suite lives (defaults of --fixtures and --golden), relative to the config."""

    fixtures: str = "fixtures"
    golden: str = "golden"


#: ``baseline.*`` kinds learned from the code path: one accepted night says what they are.
BASELINE_STRUCTURE = ("replies", "post", "tools", "llm_calls", "state")
#: Kinds a real model varies: several nights tell what held from what varied.
BASELINE_VARYING = ("length", "language", "links", "tokens", "facts", "latency", "latency_trend")
BASELINE_KINDS = BASELINE_STRUCTURE + BASELINE_VARYING


#: The kinds of ``baseline.*`` checks, each on (true) or off (false); absent: on.
BaselineKinds = create_model(
    "BaselineKinds", __base__=Strict,
    __doc__="The kinds of ``baseline.*`` checks, each on (true) or off (false); absent: on.",
    **{kind: (bool | None, None) for kind in ("enabled", *BASELINE_KINDS)})


class BaselineModel(BaselineKinds):
    """``[baseline]``: checks learned from the accepted nights (docs/CASES.md "Baseline checks").

    Precedence: the case's ``baseline:`` key, then ``[baseline.layers.<layer>]``, then
    ``[baseline]``. ``baseline: false`` (or ``enabled = false``) switches every kind off;
    ``{facts: false}`` one kind."""

    model_config = ConfigDict(**STRICT, frozen=True, use_attribute_docstrings=True)

    enabled: bool = True
    min_nights: Count = 3
    min_nights_structure: Count = 1
    window: Count = 10
    length_tolerance: NonNegative = 0.3
    length_slack_chars: NonNegative = 40.0
    tokens_tolerance: NonNegative = 0.25
    tokens_slack: NonNegative = 50.0
    latency_ratio: Annotated[float, Field(ge=1)] = 2.0
    latency_min_ms: NonNegative = 2000.0
    trend_min_cases: Annotated[int, Field(ge=3)] = 12
    trend_min_rho: Annotated[float, Field(gt=0, le=1)] = 0.5
    trend_min_ms: NonNegative = 750.0
    layers: dict[str, BaselineKinds] = {}
    """``[baseline.layers.<layer>]``: ``enabled`` and per kind on/off for one layer."""

    @field_validator("layers", mode="after")
    @classmethod
    def _known_layers(cls, value: dict, info: ValidationInfo) -> dict:
        problem = _layer_problem(tuple(value), info)
        if problem:
            raise ValueError(problem.replace(FIX, " (a [baseline.layers.<layer>] table)" + FIX, 1))
        return value

    @property
    def kinds(self) -> dict[str, bool]:
        """Per kind on/off for the project (absent: on)."""
        return {k: v for k in BASELINE_KINDS if (v := getattr(self, k)) is not None}

    def needed(self, kind: str) -> int:
        """Accepted nights a kind needs before its check holds a case to it."""
        return self.min_nights_structure if kind in BASELINE_STRUCTURE else self.min_nights

    def kinds_for(self, layer: str, case_setting: Any = None) -> frozenset[str]:
        """The kinds a case of ``layer`` with ``baseline: case_setting`` is held to."""
        kinds = self.kinds
        on = {k: self.enabled and kinds.get(k, True) for k in BASELINE_KINDS}
        lay = self.layers.get(layer)
        lay = lay.model_dump(exclude_none=True) if lay is not None else {}
        if lay.get("enabled") is False:
            on = dict.fromkeys(BASELINE_KINDS, False)
        for k in BASELINE_KINDS:
            if k in lay:
                on[k] = bool(lay[k]) and lay.get("enabled", True) is not False
        if case_setting is False:
            return frozenset()
        if case_setting is True:  # the case asks for it back where its layer switched it off
            on = {k: kinds.get(k, True) for k in BASELINE_KINDS}
        elif isinstance(case_setting, Mapping):
            if case_setting.get("enabled") is False:
                return frozenset()
            for k in BASELINE_KINDS:
                if k in case_setting:
                    on[k] = bool(case_setting[k])
        return frozenset(k for k, v in on.items() if v)


class ConfigModel(Section):
    """harness.toml (docs/CONFIG.md)."""

    model_config = ConfigDict(extra="forbid", strict=True, allow_inf_nan=False, frozen=True, title="harness.toml")

    target: TargetModel = Field(default_factory=TargetModel)
    sandbox: SandboxModel = Field(default_factory=SandboxModel)
    suite: SuiteModel = Field(default_factory=SuiteModel)
    critic: CriticModel = Field(default_factory=CriticModel)
    embeddings: EmbeddingsModel = Field(default_factory=EmbeddingsModel)
    budget: BudgetModel = Field(default_factory=BudgetModel)
    alerts: AlertsModel = Field(default_factory=AlertsModel)
    storage: StorageModel | None = None
    schedule: ScheduleModel = Field(default_factory=ScheduleModel)
    baseline: BaselineModel = Field(default_factory=BaselineModel)

    @model_validator(mode="after")
    def _upstream_port(self) -> "ConfigModel":
        used = [k for k in ("llm_upstream", "anthropic_upstream") if "{port}" in getattr(self.sandbox, k)]
        if used and self.target.port is None and not self.target.inprocess:  # left as the text {port}
            raise ValueError(f"[sandbox] {' and '.join(used)} {'use' if len(used) > 1 else 'uses'} {{port}} (the "
                             f"target's port) but [target] port is "
                             f"not set{FIX}add port = 0 to [target] (a free port each run), or a fixed port")
        return self


@functools.lru_cache(maxsize=8)
def _with_sections(sections: tuple[tuple[str, type[BaseModel]], ...]) -> type[BaseModel]:
    if not sections:
        return ConfigModel
    return create_model("ConfigModel", __base__=ConfigModel,
                        **{name: (model, Field(default_factory=model)) for name, model in sections})


def config_model(sections: Mapping[str, type[BaseModel]] | None = None) -> type[BaseModel]:
    """harness.toml's model: the engine's sections plus the layers' own (``Layer.settings``:
    ``[<layer name>]``, e.g. the robustness layer's ``variants``)."""
    return _with_sections(tuple(sorted((sections or {}).items(), key=lambda kv: kv[0])))


def config_field_type(section: str, key: str, sections: Mapping[str, type[BaseModel]] | None = None) -> Any:
    """The annotation of ``[section] key`` (None if unknown): env overrides convert to it."""
    field = config_model(sections).model_fields.get(section)
    if field is None:
        return None
    model = field.annotation
    if section == "storage":
        model = StorageModel
    sub = getattr(model, "model_fields", {}).get(key)
    return sub.annotation if sub is not None else None


# --------------------------------------------------------------------------- case files


class DocumentAction(Strict):
    file_name: str = Field(..., min_length=1, max_length=255)
    mime_type: str = Field(..., pattern=r"^[\w.+-]+/[\w.+-]+$")
    caption: str | None = None
    source: str | None = Field(None, min_length=1, max_length=255,
                               description="the documents folder's file whose bytes the bot downloads "
                                           "(default: the file named file_name there, else a labelled placeholder)")


class PhotoAction(Strict):
    caption: str | None = None


class StickerAction(Strict):
    emoji: str | None = None


TURN_FIELDS: dict[str, Any] = {
    "send": (str | None, Field(None, description="text the user sends; placeholders and {words:N}")),
    "document": (DocumentAction | None, None),
    "photo": (PhotoAction | None, None),
    "sticker": (StickerAction | None, None),
    "edit": (str | None, Field(None, description="edits the previous text (Telegram only)")),
    "callback": (str | dict[str, Any] | None, Field(None, description="presses an inline button with this data "
                                                                      "({data, turn} for an older keyboard)")),
    # issue 15 (validated in detail by harness.cases.turns._action_options; docs/CASES.md)
    "location": (dict[str, Any] | None, Field(None, description="shares a location {latitude, longitude}")),
    "contact": (dict[str, Any] | None, Field(None, description="shares a contact {phone_number, first_name}")),
    "audio": (dict[str, Any] | None, Field(None, description="sends an audio file")),
    "voice": (dict[str, Any] | None, Field(None, description="sends a voice note")),
    "reaction": (str | dict[str, Any] | None, Field(None, description="reacts with an emoji")),
    "forward": (str | dict[str, Any] | None, Field(None, description="forwards a text from someone else")),
    "forged": (str | dict[str, Any] | None, Field(None, description="a delivery with a forged, stale or "
                                                                     "missing signature / secret token")),
    "reply_to": (int | str | dict[str, Any] | None, Field(None, description="the send quotes an earlier message")),
    "redeliver": (Literal[True] | None, None),
    "burst": (list[str] | None, Field(None, min_length=2)),
    "wait_s": (Wait, 0.0),
    "fault": (dict[str, Any] | None, Field(None, description="scripted faults (docs/CASES.md)")),
    "tools": (dict[str, Any] | None, Field(None, description="the tool double's script: per tool, a result "
                                                             "or a list of results (docs/CASES.md)")),

    "model": (dict[str, Any] | list[dict[str, Any]] | None,
              Field(None, description="the model double's script for the turn (docs/CASES.md)")),
    "as_": (str | None, Field(None, alias="as", pattern=r"^[a-z][a-z0-9_-]{0,31}$",
                              description="which user sends the turn")),
    "overlap": (bool, False),
}


class _SwitchOff:
    """``<check>: false`` passes the schema unvalidated (the loader says whether that check is a
    default one may switch off); the JSON Schema offers ``false`` beside the parameters."""

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> core_schema.CoreSchema:
        return core_schema.no_info_wrap_validator_function(lambda v, inner: v if v is False else inner(v),
                                                           handler(source))

    def __get_pydantic_json_schema__(self, schema: core_schema.CoreSchema, handler: GetJsonSchemaHandler) -> Any:
        return {"anyOf": [handler(schema), {"const": False, "description": "switches a default check off"}]}


@functools.lru_cache(maxsize=8)
def _case_models(checks: tuple[tuple[str, Any], ...], grouped: tuple[tuple[str, tuple[str, ...]], ...],
                 layers: tuple[str, ...], baseline: Any) -> type[BaseModel]:
    groups = dict(grouped)
    params = dict(checks)

    def described(name: str) -> Any:
        return params.get(name, Any)

    group_models = {
        family: create_model(f"{family.capitalize()}Checks", __config__=STRICT,
                             **{f"c_{sub}": (described(f"{family}.{sub}"), Field(None, alias=sub)) for sub in subs})
        for family, subs in groups.items()
    }
    expect_fields: dict[str, Any] = {name: (group_models[name] | None, None) for name in groups}
    expect_fields.update({name: (Annotated[described(name), _SwitchOff()], None)
                          for name in params if "." not in name and name not in groups})
    # anomaly.* are added by the nightly history; a case may only switch them off (harness.cases)
    expect_fields["anomaly"] = (bool | dict[str, bool] | None, None)
    expect = create_model("Expect", __config__=STRICT, **expect_fields)
    turn_fields = {**TURN_FIELDS, "expect": (expect | None, None)}
    turn = create_model("Turn", __config__=STRICT, **turn_fields)
    case_fields: dict[str, Any] = {
        **turn_fields,
        "description": (str, ""),
        "tags": (Strings, Field(default_factory=list)),
        "channel": (Literal["telegram", "whatsapp"], "telegram"),
        "timeout_s": (Seconds | None, None),
        "turns": (list[turn] | None, Field(None, min_length=1)),
        "users": (list[Annotated[str, Field(pattern=r"^[a-z][a-z0-9_-]{0,31}$")]] | None,
                  Field(None, min_length=2, max_length=8)),
        "variants": (list[str] | Literal["none", "all"] | None, None),
        "source": (str, Field("", description="the document the case is about (in the docs folder)")),
        "judges": (dict[str, Any] | None, None),
        "baseline": (baseline | None, Field(None, description="baseline.* checks: false, or kinds on/off "
                                                             "(docs/CASES.md)")),
    }
    defaults = create_model("Defaults", __config__=STRICT, **case_fields)
    case = create_model("Case", __config__=STRICT,
                        id=(str, Field(..., pattern=CASE_ID_RE.pattern, description="unique across the suite")),
                        **case_fields)
    layer_type: Any = Literal[tuple(layers)] if layers else str  # type: ignore[valid-type]
    return create_model("CaseFile", __config__=ConfigDict(**STRICT, title="harness case file"),
                        layer=(layer_type, ...), defaults=(defaults | None, None),
                        cases=(list[case], Field(..., min_length=1)))


def case_file_model(checks: Mapping[str, Any], grouped: Mapping[str, Sequence[str]],
                    layers: Sequence[str], baseline: Any = bool | BaselineKinds) -> type[BaseModel]:
    """The model of one case file for a suite with these checks (name -> the parameters' type;
    dotted names are the grouped families' sub-checks), these grouped families and these layers;
    ``baseline``: the type of a case's ``baseline:`` key (harness.checks.baseline.PARAMS)."""
    return _case_models(tuple(sorted(checks.items())), tuple(sorted((k, tuple(sorted(v))) for k, v in grouped.items())),
                        tuple(layers), baseline)
