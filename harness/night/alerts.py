"""Alerts: tell people, not just the report, when a run breached its budget, regressed or never started.

Channels, each configured in ``[alerts]`` (secrets only from the environment):

    [alerts]
    on = ["budget", "regression", "start_failed"]   # which events alert (default: all three)
    report_base_url = "https://reports.example/nightly"  # optional: links instead of local paths
    webhook_url_env = "HARNESS_ALERT_WEBHOOK_URL"   # Slack-compatible: POST {"text": ...}
    webhook_url = "http://127.0.0.1:9000/hook"      # (or a non-secret URL in the file)
    telegram_chat_id = "-1001234567890"             # Bot API sendMessage
    telegram_token_env = "HARNESS_ALERT_TELEGRAM_TOKEN"
    telegram_api_base = "https://api.telegram.org"  # tests point it at the emulator
    smtp_host = "smtp.example.org"                  # e-mail (smtplib, in a thread)
    smtp_port = 587
    smtp_starttls = true
    smtp_ssl = false
    smtp_user = "nightly@example.org"
    smtp_password_env = "HARNESS_ALERT_SMTP_PASSWORD"
    smtp_from = "nightly@example.org"
    smtp_to = ["team@example.org"]
    oci_topic_id = "ocid1.onstopic.oc1..."           # OCI Notifications (oci SDK, lazily imported)
    oci_config_file = "~/.oci/config"
    oci_profile = "DEFAULT"
    retries = 3                                      # tries per channel
    backoff_s = 1.0                                  # doubled after each failed try (plus jitter)
    timeout_s = 10

Every channel goes through the one retry policy (``harness.models.retry``): up to ``retries``
tries, exponential backoff with jitter, the endpoint's Retry-After (or the Bot API's
``parameters.retry_after``) honoured up to ``MAX_WAIT_S``; only transient failures
(connection errors, timeouts, 429, 5xx, SMTP 4yz) are tried again, so a wrong token or URL
(401, 403, 404) fails once. A channel that still fails is logged and returned as a failed
``AlertResult``. ``send_alerts`` never raises: an alert
must not crash the run it reports on.
"""

from __future__ import annotations

import asyncio
import json
import typing
import logging
import os
import smtplib
import ssl
from dataclasses import dataclass, replace
from email.message import EmailMessage
from typing import Any, Awaitable, Callable, Mapping

import aiohttp

from harness.channels import read_capped
from harness.config import config_section
from harness.models.retry import RetryPolicy, retry_after_s, transient_status
from harness.redact import active
from harness.schema.models import AlertsModel

log = logging.getLogger("harness.night.alerts")

KINDS = typing.get_args(typing.get_args(AlertsModel.model_fields["on"].annotation)[0])
OCI_BODY_MAX = 64 * 1024  # OCI Notifications: message body at most 64 KB
TELEGRAM_TEXT_MAX = 4096
#: The most of an alert channel's answer read (bytes): a sendMessage answer is a few kB.
ANSWER_MAX = 1_000_000
#: The longest wait between two tries of a channel, also when the endpoint's Retry-After asks for more.
MAX_WAIT_S = 60.0


@dataclass(frozen=True)
class Alert:
    """What happened, how much, and where the report is."""

    kind: str
    """budget | regression | start_failed."""
    title: str
    """One line: e.g. ``docbot nightly: cost budget exceeded ($0.41 > $0.25)``."""
    details: str = ""
    """Further lines: the cases, the figures, the thresholds."""
    amount: str = ""
    """How much, in words: ``$0.41 of $0.25``, ``3 regressions``."""
    report: str = ""
    """Where the report is: a path or a URL."""
    run_id: str = ""

    def text(self) -> str:
        lines = [self.title]
        if self.amount:
            lines.append(f"How much: {self.amount}")
        if self.details:
            lines.append(self.details)
        if self.report:
            lines.append(f"Report: {self.report}")
        return "\n".join(lines)


@dataclass(frozen=True)
class AlertResult:
    channel: str
    """webhook | telegram | email | oci."""
    ok: bool
    attempts: int
    error: str = ""


def validate(config) -> None:
    """A typo in [alerts] would silently mute an alert: the schema refuses unknown keys and bad
    numbers when the config is loaded (exit 2); a stand-in's raw table is checked here."""
    config_section(config, "alerts")


def alert_settings(config, environ: Mapping[str, str] | None = None) -> AlertsModel:
    """``[alerts]`` with its secrets read from the environment variables its ``*_env`` keys name."""
    env = os.environ if environ is None else environ
    s = config_section(config, "alerts")

    def secret(name: str) -> str:  # the value of the variable a ``*_env`` key names
        return env.get(name, "") if name else ""

    return s.with_runtime(webhook_url=secret(s.webhook_url_env), telegram_token=secret(s.telegram_token_env),
                          smtp_password=secret(s.smtp_password_env))


# --------------------------------------------------------------------------- channels


class ChannelError(Exception):
    """A channel's endpoint answered with an error: retried when ``transient`` (429, 5xx), with its wait."""

    def __init__(self, message: str, status: int, retry_after: float | None = None):
        super().__init__(message)
        self.status = status
        self.transient = transient_status(status)
        self.retry_after = retry_after


async def _webhook(s: AlertsModel, alert: Alert) -> None:
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=s.timeout_s)) as http:
        async with http.post(s.webhook, json={"text": alert.text()}) as resp:
            if resp.status >= 300:
                raise ChannelError(f"webhook answered HTTP {resp.status}", resp.status,
                                   retry_after_s(resp.headers.get("Retry-After")))


async def _telegram(s: AlertsModel, alert: Alert) -> None:
    url = f"{s.telegram_api_base}/bot{s.telegram_token}/sendMessage"
    body = {"chat_id": s.telegram_chat_id, "text": alert.text()[:TELEGRAM_TEXT_MAX], "disable_web_page_preview": True}
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=s.timeout_s)) as http:
        async with http.post(url, json=body) as resp:
            raw = await read_capped(resp, ANSWER_MAX)  # an endless answer is never read whole
            try:
                data = json.loads(raw) if len(raw) <= ANSWER_MAX else None
            except (ValueError, RecursionError):
                data = None
            if resp.status >= 300 or not (isinstance(data, dict) and data.get("ok")):
                # never echo the URL: it carries the bot token
                data = data if isinstance(data, dict) else {}
                params = data.get("parameters") if isinstance(data.get("parameters"), dict) else {}
                code = data.get("error_code")
                status = resp.status if resp.status >= 300 else (
                    code if isinstance(code, int) and not isinstance(code, bool) and 400 <= code <= 599 else 502)
                raise ChannelError(f"Bot API sendMessage answered HTTP {resp.status}: {data.get('description', '')}",
                                   status, retry_after_s(params.get("retry_after"))
                                   if params.get("retry_after") is not None
                                   else retry_after_s(resp.headers.get("Retry-After")))


def _send_mail(s: AlertsModel, alert: Alert) -> None:
    msg = EmailMessage()
    msg["Subject"] = alert.title
    msg["From"] = s.smtp_from
    msg["To"] = ", ".join(s.smtp_to)
    msg.set_content(alert.text())
    cls = smtplib.SMTP_SSL if s.smtp_ssl else smtplib.SMTP
    with cls(s.smtp_host, s.smtp_port, timeout=s.timeout_s) as smtp:
        if s.smtp_starttls and not s.smtp_ssl and smtp.has_extn("starttls"):
            smtp.starttls(context=ssl.create_default_context())
        if s.smtp_user and s.smtp_password:
            smtp.login(s.smtp_user, s.smtp_password)
        smtp.send_message(msg)


async def _email(s: AlertsModel, alert: Alert) -> None:
    await asyncio.to_thread(_send_mail, s, alert)


def _oci_publish(s: AlertsModel, alert: Alert) -> None:
    try:
        from oci.ons.models import MessageDetails
    except ImportError:
        if s.oci_client is None:
            raise RuntimeError("OCI Notifications needs the oci SDK: pip install oci") from None
        MessageDetails = _PlainMessageDetails  # a fake client in tests takes any object with title/body
    client = s.oci_client
    if client is None:
        import oci

        cfg = oci.config.from_file(os.path.expanduser(s.oci_config_file), s.oci_profile)
        client = oci.ons.NotificationDataPlaneClient(cfg)
    body = alert.text().encode("utf-8")[:OCI_BODY_MAX].decode("utf-8", "ignore")
    client.publish_message(s.oci_topic_id, MessageDetails(title=alert.title[:255], body=body))


@dataclass
class _PlainMessageDetails:
    title: str
    body: str


async def _oci(s: AlertsModel, alert: Alert) -> None:
    await asyncio.to_thread(_oci_publish, s, alert)


def _channels(s: AlertsModel) -> dict[str, Callable[[AlertsModel, Alert], Awaitable[None]]]:
    out = {}
    if s.webhook:
        out["webhook"] = _webhook
    if s.telegram_chat_id and s.telegram_token:
        out["telegram"] = _telegram
    if s.smtp_host and s.smtp_to:
        out["email"] = _email
    if s.oci_topic_id:
        out["oci"] = _oci
    return out


def policy(s: AlertsModel) -> RetryPolicy:
    """The one retry policy (harness.models.retry) with the [alerts] numbers."""
    return RetryPolicy(attempts=s.retries, backoff_s=s.backoff_s, max_wait_s=MAX_WAIT_S)


async def _with_retries(name: str, fn, s: AlertsModel, alert: Alert, sleep=asyncio.sleep) -> AlertResult:
    """One channel through the one retry policy (transient failures only); never raises."""
    tries = 0

    async def once() -> None:
        nonlocal tries
        tries += 1
        try:
            await asyncio.wait_for(fn(s, alert), s.timeout_s * 2)
        except Exception as exc:
            log.warning("alert via %s failed (try %d of %d): %s", name, tries, s.retries,
                        active().text(f"{type(exc).__name__}: {exc}"))  # an endpoint may echo its token
            raise

    try:
        await policy(s).acall(once, what=f"alert via {name}", sleep=sleep)
        return AlertResult(name, True, tries)
    except Exception as exc:  # the last failure is reported, never raised
        return AlertResult(name, False, tries, active().text(f"{type(exc).__name__}: {exc}"))


async def send_alerts(config, event: Alert, settings: AlertsModel | None = None,
                      sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep) -> list[AlertResult]:
    """Send ``event`` on every configured channel (concurrently); never raises. ``sleep`` is the
    wait between tries (tests inject one that records instead of waiting)."""
    try:
        s = settings or alert_settings(config)
        if event.kind not in s.on:
            return []
        if s.report_base_url and event.report and "://" not in event.report:
            event = replace(event, report=f"{s.report_base_url.rstrip('/')}/{event.run_id or event.report}/report.html")
        channels = _channels(s)
        r = active()  # what leaves, and what an endpoint echoed back, is redacted (harness.redact)
        event = replace(event, title=r.text(event.title), details=r.text(event.details), amount=r.text(event.amount),
                        report=r.text(event.report))
        return list(await asyncio.gather(*(_with_retries(n, fn, s, event, sleep) for n, fn in channels.items())))
    except Exception as exc:  # a broken alert config must not crash the run
        log.error("alerts failed: %s", active().text(str(exc)))
        return [AlertResult("config", False, 0, active().text(f"{type(exc).__name__}: {exc}"))]


# --------------------------------------------------------------------------- events from a run


def run_alerts(report: Mapping[str, Any], report_path: str) -> list[Alert]:
    """The alerts a finished run calls for (from its results.json dict)."""
    summary = report.get("summary") or {}
    target = (report.get("target") or {}).get("name", "target")
    run_id = str(report.get("run_id", ""))
    out = []
    budget = summary.get("budget") or {}
    if budget.get("breached"):
        spenders = ", ".join(f"{b['id']} (${b['cost_usd']:.4f})" for b in budget.get("spent_by", [])[:5])
        out.append(Alert(
            kind="budget", run_id=run_id, report=report_path,
            title=f"{target} run {run_id}: cost budget exceeded",
            amount=f"spent ${budget.get('spent_usd', 0):.4f} of a ${budget.get('limit_usd') or 0:.4f} budget"
                   + (" (SIMULATED spend)" if summary.get("simulated") else ""),
            details=f"{budget.get('reason', '')}; {budget.get('skipped', 0)} cases not started; "
                    f"spent by: {spenders or '(none priced)'}"))
    failed = [c for c in report.get("cases") or () if c.get("status") == "fail"]
    if failed:
        lines = []
        for c in failed[:10]:
            ev = next((e for e in c.get("evidence") or () if e.get("passed") is False), {})
            lines.append(f"- {c.get('id')}: {ev.get('check', '?')}: {ev.get('reason', '')}"[:300])
        anomalies = sum(1 for c in failed for e in c.get("evidence") or ()
                        if str(e.get("check", "")).startswith("anomaly.") and e.get("passed") is False)
        out.append(Alert(
            kind="regression", run_id=run_id, report=report_path,
            title=f"{target} run {run_id}: {len(failed)} case(s) regressed",
            amount=f"{len(failed)} failed of {summary.get('executed', 0)} executed"
                   + (f", {anomalies} anomalies against history" if anomalies else ""),
            details="\n".join(lines)))
    return out


def start_failed_alert(target: str, error: str, where: str = "") -> Alert:
    return Alert(kind="start_failed", title=f"{target}: the nightly run failed to start",
                 amount="no case ran", details=error[:2000], report=where)


def notify(config, alerts: list[Alert]) -> list[str]:
    """Send ``alerts`` synchronously (for the CLI); returns note lines for the report. Never raises."""
    notes = []
    if not alerts:
        return notes

    async def go():
        return [(a, await send_alerts(config, a)) for a in alerts]

    try:
        sent = asyncio.run(go())
    except Exception as exc:  # pragma: no cover - defensive: never crash the run
        return [f"alerts could not be sent: {type(exc).__name__}: {exc}"]
    for alert, results in sent:
        for r in results:
            notes.append(f"alert {alert.kind} via {r.channel}: "
                         + ("sent" if r.ok else f"FAILED after {r.attempts} tries ({r.error})"))
    return notes
