"""The harness's domain types: frozen, plain, documented.

Everything that crosses a module line is one of these. Mutable collection happens in
``harness.sandbox.router`` (a case's recorder); what the runner hands to checks and
writers is frozen.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any, Literal, Mapping

#: A case id (also how goldens and the quarantine name cases): ``[a-z0-9]`` words joined by dashes.
CASE_ID_RE = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
CHANNELS: tuple[str, ...] = ("telegram", "whatsapp")

Channel = Literal["telegram", "whatsapp"]
Availability = Literal["ready", "unavailable"]
Status = Literal["pass", "soft", "fail", "error", "unavailable", "skipped"]

#: Evidence produced by the real system vs. by a test double (labelled everywhere).
SOURCE_REAL = "real"
SOURCE_DOUBLE = "test-double"


@dataclass(frozen=True)
class CheckSpec:
    """One check a turn asks for, as written in the case file."""

    name: str
    """Dispatch key, e.g. ``reply.regex``, ``replies``, ``tools_not_called``."""
    params: Any
    """The value written under that key in the case file (already validated)."""


@dataclass(frozen=True)
class Turn:
    """One thing the simulated user does, and what must hold afterwards."""

    send: str | None = None
    """Text to send (placeholders such as ``{docs}`` are filled in at run time)."""
    kind: str = "text"
    """text | command | document | photo | sticker | edit | callback | duplicate | empty."""
    options: Mapping[str, Any] = field(default_factory=dict)
    """Kind-specific extras: file_name, mime_type, data (callback), ..."""
    wait_s: float = 0.0
    """Seconds to wait before this turn is sent."""
    checks: tuple[CheckSpec, ...] = ()
    """Checks evaluated after this turn's replies settled."""
    faults: Mapping[str, Any] = field(default_factory=dict)
    """Scripted faults armed for this turn only (``fault:`` in the case file; see
    harness/sandbox/faults.py): LLM/document-server faults and delivery faults."""
    tools: Mapping[str, Any] = field(default_factory=dict)
    """The tool double's script for this turn (``tools:``; harness/sandbox/spy.py): per tool
    name, a result or a list of results used in order. A case-level ``tools:`` is merged in."""
    user: str = ""
    """Which of the case's ``users`` sends this turn (``as:``); '' = the first (or only) user."""
    disabled: tuple[str, ...] = ()
    """Default checks this turn switched off (``<check>: false`` in its ``expect``): a layer's
    ``default_checks``, the Telegram callback turn's ``callbacks_answered`` and (for the whole
    case) ``anomaly.*``; never evaluated, never added."""
    overlap: bool = False
    """Send the next turn at once, without waiting for this one's replies (``overlap: true``):
    consecutive overlapping turns and the turn after them settle together, each judged on
    the replies its own user's chat received meanwhile."""
    model: tuple[Mapping[str, Any], ...] = ()
    """The model double's script for this turn (``model:``, harness/sandbox/model_double.py):
    one step per LLM call, the last repeating; () = no script."""


@dataclass(frozen=True)
class Case:
    """One test case from a fixture file."""

    id: str
    """Unique across the suite: ``[a-z0-9-]+``."""
    layer: str
    """The layer it belongs to (``harness.layer``: the built-in four or a plugin's)."""
    channel: Channel
    """Which channel the simulated user writes on."""
    turns: tuple[Turn, ...]
    """One or more turns; a single-turn case has exactly one."""
    tags: tuple[str, ...] = ()
    """Free labels for selection and reporting."""
    file: str = ""
    """The fixture file the case came from (for error messages)."""
    timeout_s: float | None = None
    """Overrides the run's per-case timeout."""
    description: str = ""
    """Optional human explanation of what the case protects against."""
    source: str = ""
    """The document in fixtures/documents the case is about: the critic's ground truth."""
    variants: tuple[str, ...] | None = None
    """Which metamorphic variants of its requests to derive (``variants: [typos, case]``);
    ``()`` for none (``variants: none``); None: the deriving layer's default."""
    users: tuple[str, ...] = ()
    """Several simulated users in one case (``users: [alice, bob]``), each with a chat of its
    own; turns say who sends them (``as:``). Empty: one user."""
    baseline: bool | Mapping[str, bool] | None = None
    """``baseline:`` in the case file: false (no baseline checks), or kinds switched on/off
    (``{facts: false}``); None: the layer's and the project's ``[baseline]`` settings."""
    original: str = ""
    """A metamorphic variant's original case (``layers/variants.py``): when it runs in the same
    run, its observed turns stand in for this case's leading ``original`` user's turns, which are
    not sent again (``run/reuse.py``); '' for none."""


@dataclass(frozen=True)
class Reply:
    """A message the agent sent to the simulated user, as an emulator received it."""

    channel: Channel
    """The channel it went out on."""
    chat: str
    """Telegram chat id or WhatsApp recipient wa_id, as a string."""
    text: str
    """Message text, or the caption of a document/photo ('' when none), as the user sees it:
    Telegram markup (``parse_mode``) parsed away."""
    at: float
    """Unix time (seconds, float) when the emulator received it."""
    method: str
    """API method that carried it (sendMessage, sendDocument, editMessageText, messages, webhook-response)."""
    kind: str = "text"
    """text | document | photo | edit | interactive."""
    message_id: str = ""
    """The id the emulator assigned (Telegram message_id or WhatsApp wamid)."""
    buttons: tuple[str, ...] = ()
    """Inline keyboard / interactive button labels, if any."""
    raw: Mapping[str, Any] = field(default_factory=dict)
    """The request parameters as received (secrets removed)."""
    raw_text: str | None = None
    """The text exactly as the agent sent it, markup included (None: the same as ``text``)."""
    parse_mode: str = ""
    """Telegram ``parse_mode`` the text was parsed with (MarkdownV2 | Markdown | HTML; '' none)."""
    entities: tuple[Mapping[str, Any], ...] = ()
    """Formatting the user sees (Bot API ``MessageEntity`` dicts, UTF-16 offsets into ``text``)."""

    @property
    def sent_text(self) -> str:
        """The raw text the agent sent (``reply_raw.*`` checks read this, ``reply.*`` read ``text``)."""
        return self.text if self.raw_text is None else self.raw_text


@dataclass(frozen=True)
class Event:
    """One call the agent made across a sandbox boundary."""

    source: str
    """Which sandbox server saw it: telegram | whatsapp | gateway | docs | tools | driver."""
    name: str
    """Tool name used by checks: ``telegram.sendMessage``, ``whatsapp.send``, ``llm``,
    ``fetch_document``, or the spy tool's own name."""
    at: float
    """Unix time (seconds) when the request arrived."""
    status: int
    """HTTP status the sandbox answered with (or the upstream's, for the gateway)."""
    duration_ms: float = 0.0
    """Time spent answering the call."""
    request: Mapping[str, Any] = field(default_factory=dict)
    """Parsed request parameters (secrets removed)."""
    response: Mapping[str, Any] | None = None
    """Parsed response body, when small and JSON."""
    keys: tuple[str, ...] = ()
    """Correlation keys (``tg:<chat>``, ``wa:<wa_id>``, ``user:<id>``, ``tok:<token>``)."""
    reply: Reply | None = None
    """Set when this call delivered a user-visible message."""
    error: str = ""
    """What went wrong, when the call failed."""
    meta: Mapping[str, Any] = field(default_factory=dict)
    """Source-specific facts, e.g. model and token usage for ``llm``."""


#: The document token is a path segment: {docs} = http://127.0.0.1:P/c/<token>
DOC_TOKEN_RE = re.compile(r"/c/([a-z0-9]{8,32})(?:/|\b)")


#: A loopback URL's port, and its ``{docs}`` folder when it has one: new every run.
_RUN_ADDRESS = re.compile(r"(https?://(?:127\.0\.0\.1|localhost|\[::1\])):\d{1,5}(?![0-9])"
                          r"(/c/[A-Za-z0-9]{8,32}(?![A-Za-z0-9]))?", re.I)


def without_run_addresses(text: str) -> str:
    """``text`` with what changes every run written the same way: a loopback URL's port dropped
    and its document folder written ``/c/*`` (``http://127.0.0.1:43813/c/2d252d28f360/a.pdf`` ->
    ``http://127.0.0.1/c/*/a.pdf``). Only loopback URLs with a port: the sandbox's own."""
    if "://" not in text:
        return text
    return _RUN_ADDRESS.sub(lambda m: m.group(1) + ("/c/*" if m.group(2) else ""), text)


def doc_token_keys(text: str) -> list[str]:
    """Correlation keys (``tok:<token>`` in ``Event.keys``) for every document token mentioned in ``text``."""
    return [f"tok:{t}" for t in DOC_TOKEN_RE.findall(text or "")]


@dataclass(frozen=True)
class TurnObservation:
    """What happened at the boundaries during one turn."""

    index: int
    """Position of the turn in the case (0-based)."""
    sent_at: float
    """Unix time the update was delivered."""
    delivery_status: int | None
    """HTTP status the agent's webhook answered (None: not delivered)."""
    delivery_error: str
    """Why delivery failed ('' when it did not)."""
    replies: tuple[Reply, ...]
    """User-visible messages received during the turn, in arrival order."""
    events: tuple[Event, ...]
    """Every boundary call attributed to the turn, in arrival order."""
    settled_after_s: float
    """How long the harness waited for the turn to settle."""
    timed_out: bool = False
    """True when the turn hit its timeout before it settled."""
    state: Mapping[str, Any] | None = None
    """State probe snapshot after the turn, if the target has a probe."""
    state_error: str = ""
    """Why the probe gave nothing ('' when it answered or is not configured)."""
    chat: str = ""
    """The chat of the user who sent this turn, when the case has several users ('' = the case's chat)."""
    unattributed: tuple[Reply, ...] = ()
    """Messages the agent sent during the turn that no case could claim (no chat, number or
    document link of any running case): a post with a wrong link is told apart from no post."""
    overflow: Mapping[str, Any] = field(default_factory=dict)
    """What came beyond the per-turn caps of ``sandbox/router.py`` (counted, not stored):
    ``{"replies", "reply_bytes", "events", "chats": {chat: replies}, "max_*": caps}``; {} when nothing."""
    unattributed_calls: Mapping[str, Any] = field(default_factory=dict)
    """LLM and tool calls no case could claim while this case and others ran during the turn
    (``sandbox/router.py``): ``{"llm": n, "tools": {name: n}, "running": n, "ambiguous": n}``; {}
    when none. Any of them may have been this case's: its call-dependent checks are unavailable."""
    borrowed: str = ""
    """The case this turn was observed in when it is not this one (a metamorphic variant's
    original, ``Case.original``): compared with, never timed, metered or checked again; '' for
    the case's own turns."""

    @property
    def first_reply_ms(self) -> float | None:
        return (self.replies[0].at - self.sent_at) * 1000 if self.replies else None

    @property
    def last_reply_ms(self) -> float | None:
        return (self.replies[-1].at - self.sent_at) * 1000 if self.replies else None


@dataclass(frozen=True)
class Observation:
    """Everything observed while one case ran (complete even when the case failed)."""

    case_id: str
    """The case this belongs to."""
    channel: Channel
    """Channel of the simulated user."""
    chat_id: str
    """The chat id (Telegram) or wa_id (WhatsApp) the case ran under."""
    turns: tuple[TurnObservation, ...]
    """One entry per turn that was attempted."""
    started_at: float
    """Unix time the case started."""
    finished_at: float
    """Unix time the case finished."""
    error: str = ""
    """Harness-side failure during the case (timeout, crash), '' when none."""
    user_chats: tuple[str, ...] = ()
    """Every simulated user's chat, when the case has several users (messages to them are
    replies, never posts)."""

    @property
    def events(self) -> tuple[Event, ...]:
        return tuple(e for t in self.turns for e in t.events)

    @property
    def replies(self) -> tuple[Reply, ...]:
        return tuple(r for t in self.turns for r in t.replies)

    def own(self) -> "Observation":
        """Without the turns borrowed from another case (``TurnObservation.borrowed``): what this
        case's own run did, for its timing and metering."""
        if not any(t.borrowed for t in self.turns):
            return self
        return replace(self, turns=tuple(t for t in self.turns if not t.borrowed))


@dataclass(frozen=True)
class Evidence:
    """One check's verdict; uniform for every check family."""

    check: str
    """The check that produced it, e.g. ``reply.regex``."""
    turn: int | None
    """The turn it belongs to, or None for case-level checks."""
    availability: Availability
    """``unavailable`` when the evidence could not be gathered; never counts as passed."""
    passed: bool | None
    """The verdict; None when unavailable."""
    score: float | None = None
    """Scored checks' score in [0, 1]; None for boolean checks."""
    expected: str = ""
    """What the check wanted, human readable."""
    observed: str = ""
    """What was seen, human readable (truncated)."""
    reason: str = ""
    """A specific explanation, e.g. ``latency 1200ms > threshold 800ms``."""
    evaluator: str = ""
    """Name and version of what judged it, e.g. ``regex@1``."""
    source: str = SOURCE_REAL
    """``real`` or ``test-double``: where the judged evidence came from."""


@dataclass(frozen=True)
class Tokens:
    """Token counts of a case's LLM calls."""

    input: int = 0
    output: int = 0


@dataclass(frozen=True)
class CaseResult:
    """The verdict on one case."""

    id: str
    layer: str
    channel: Channel
    status: Status
    """pass | soft | fail | error | unavailable | skipped."""
    evidence: tuple[Evidence, ...]
    attempts: int = 1
    """How many times the case ran (``--repeat``)."""
    passes: int = 0
    """How many of the attempts passed."""
    pass_at_k: bool | None = None
    """At least one of K attempts passed (None when K == 1)."""
    pass_hat_k: bool | None = None
    """All K attempts passed (None when K == 1)."""
    latency_ms: float | None = None
    """Time from the first delivery to the last reply (None: no reply)."""
    llm_calls: int = 0
    tokens: Tokens = field(default_factory=Tokens)
    cost_usd: float | None = 0.0
    error: str = ""
    """Why the case errored (fixture-independent: timeout, crash, delivery failure)."""
    file: str = ""
    tags: tuple[str, ...] = ()
    observation: Observation | None = None
    """The last attempt's observation, for reports and drill-down."""
    flaky: bool = False
    """The outcome varied across repeats (some attempts passed, some did not)."""
    pass_rate_ci: tuple[float, float] | None = None
    """95% Wilson interval on the pass rate over the attempts (None when K == 1)."""
    metrics: "CaseMetrics | None" = None
    """Performance and cost of the case, measured at the sandbox (cost layer)."""
    quarantined: bool = False
    """Listed in fixtures/quarantine.yaml: reported with its real status, but its failure
    does not count toward the run's verdict or exit code (harness.night.quarantine)."""
    baseline: Mapping[str, Any] | None = None
    """What the accepted nights held this case to (results.json ``cases[].baseline``: nights,
    skipped kinds, the accepted run's reply per turn, the changes); None: no baseline checked."""
    attempt_observations: tuple["Observation | None", ...] = ()
    """Every attempt's observation under ``--repeat k`` (k > 1), in order; results.json keeps
    the attempts other than ``observation`` as ``other_attempts`` (a repeat counts as a night)."""
    machine: Mapping[str, Any] | None = None
    """What the machine gave the case's last attempt (loop lag, CPU of other processes,
    overloaded or not: ``harness.run.machine.Window.to_dict``); None when not measured."""


@dataclass(frozen=True)
class Counts:
    """Counts with their own denominators (DESIGN: planned / executed / decidable)."""

    planned: int = 0
    executed: int = 0
    decidable: int = 0
    passed: int = 0
    soft: int = 0
    failed: int = 0
    errored: int = 0
    unavailable: int = 0
    skipped: int = 0
    cost_usd: float = 0.0
    verdict: str = "pass"


@dataclass(frozen=True)
class RunReport:
    """A whole run, as written to results.json."""

    run_id: str
    started_at: str
    finished_at: str
    harness_version: str
    target: Mapping[str, str]
    golden_version: str
    models: Mapping[str, str]
    summary: Counts
    layers: Mapping[str, Counts]
    cases: tuple[CaseResult, ...]
    exit_code: int = 0
    """What ``harness run`` exits with for this report."""
    notes: tuple[str, ...] = ()
    """Run-level remarks: unattributed calls, target stderr tail, budget stops."""
    layer_metrics: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    """Per-layer metrics beyond the counts (e.g. ``multiturn: {"slots": {...}}``); merged
    into that layer's entry of results.json."""
    perf: Mapping[str, Any] = field(default_factory=dict)
    """Run-level performance and cost beyond the counts (harness/cost.py): merged into
    results.json ``summary`` (``harness_cost_usd``, ``simulated``, ``budget``, latency...)."""


@dataclass(frozen=True)
class CaseMetrics:
    """Latency, calls, tokens and cost of one case, from the sandbox's own records (cost layer)."""

    first_reply_ms: float | None = None
    """First turn: delivery to the first own reply (None: no reply)."""
    last_reply_ms: float | None = None
    """Delivery of the first turn to the last own reply of the case."""
    llm_ms: tuple[float, ...] = ()
    """Duration of each LLM call, in arrival order."""
    fetch_ms: tuple[float, ...] = ()
    """Duration of each document fetch."""
    llm_calls: int = 0
    fetches: int = 0
    sends: int = 0
    """Messages the agent sent (Telegram send*/edit*, WhatsApp messages), to anyone."""
    calls: int = 0
    """Every boundary call the agent made (driver deliveries excluded)."""
    errors: int = 0
    """Calls answered with a non-2xx status."""
    tokens_input: int = 0
    tokens_output: int = 0
    tokens_estimated: bool = False
    """True when any count is a tiktoken estimate for a model outside the encoding's family."""
    tokens_source: str = "none"
    """usage | tiktoken | mixed | none."""
    cost_usd: float | None = 0.0
    """Agent spend in USD (all attempts); None when any call could not be priced."""
    cost_reason: str = ""
    """Why the cost is unavailable, or how it was priced."""
    simulated: bool = False
    """The spend is priced, not billed (offline model named after field models)."""
    replayed_calls: int = 0
    """LLM calls answered from a cassette (no upstream, no spend)."""
    replay_misses: int = 0

    @property
    def error_rate(self) -> float:
        return self.errors / self.calls if self.calls else 0.0
