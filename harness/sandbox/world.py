"""The sandbox as a whole: every loopback server of one run, started and stopped together."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from harness.channels.telegram import BotApiEmulator
from harness.channels.whatsapp import GraphApiEmulator
from harness.config import Config
from harness.sandbox.docs import DocumentServer
from harness.sandbox.faults import FaultBook
from harness.sandbox.gateway import LlmGateway
from harness.sandbox.model_double import ScriptBook
from harness.sandbox.ports import SERVERS, Reserved, placeholders
from harness.sandbox.router import Router
from harness.sandbox.server import Listening, listen
from harness.sandbox.spy import ToolScripts, ToolSpy


@dataclass
class Sandbox:
    """Started servers and the router that attributes their events to cases."""

    config: Config
    router: Router = field(default_factory=Router)
    telegram_api: str = ""
    whatsapp_api: str = ""
    llm_base_url: str = ""
    docs_base: str = ""
    tools_url: str = ""
    target_port: int | None = None
    """Fills ``{port}`` in ``llm_upstream`` (an offline model served by the target itself)."""
    telegram: object = None
    whatsapp: object = None
    faults: FaultBook = field(default_factory=FaultBook)
    """Scripted per-case, per-turn faults the gateway and document server apply."""
    tool_scripts: ToolScripts = field(default_factory=ToolScripts)
    """Per-case, per-turn ``tools:`` scripts the tool double answers with (spy.py)."""
    scripts: ScriptBook = field(default_factory=ScriptBook)
    """Per-case, per-turn ``model:`` scripts the gateway's model double answers from."""
    gateway: LlmGateway | None = None
    _servers: list[Listening] = field(default_factory=list)

    async def start(self, reserved: Reserved | None = None) -> "Sandbox":
        """Start every server; on ``reserved``'s sockets when given (bound ahead, ``ports.py``)."""
        cfg, sec = self.config, self.config.secrets
        sink = self.router.record

        def at(key: str) -> dict:  # the server's name in messages, and its socket when bound ahead
            return {"name": SERVERS[key], "sock": reserved.take(key) if reserved is not None else None}

        async def serve(app, **kw):  # every server tells the router what it is serving (Router.busy_for)
            app.middlewares.insert(0, self.router.middleware())
            return await listen(app, **kw)

        try:
            self.telegram = BotApiEmulator(sec.bot_token, sink)
            self.telegram.case_faults = self.faults
            srv = await serve(self.telegram.app(), **at("telegram"))
            self._servers.append(srv)
            self.telegram_api = srv.base_url

            self.whatsapp = GraphApiEmulator(cfg.sandbox.phone_number_id, sec.whatsapp_token, sink)
            self.whatsapp.case_faults = self.faults
            srv = await serve(self.whatsapp.app(), **at("whatsapp"))
            self._servers.append(srv)
            self.whatsapp_api = srv.base_url

            key = os.environ.get(cfg.sandbox.llm_upstream_key_env, "")
            gateway = LlmGateway(sink, upstream=self._upstream(), api_key=key,
                                 anthropic_upstream=self._upstream(cfg.sandbox.anthropic_upstream),
                                 anthropic_key=os.environ.get(cfg.sandbox.anthropic_upstream_key_env, ""))
            gateway.faults = self.faults
            gateway.keys_of = self.router.llm_keys  # one resolution: event keys, faults, scripts
            gateway.scripts = self.scripts
            self.gateway = gateway
            from harness.sandbox.metering import gateway_hooks

            for name, hook in gateway_hooks(cfg, self._upstream()).items():  # meter, cassette (cost layer)
                setattr(gateway, name, hook)
            srv = await serve(gateway.app(), **at("llm"))
            self._servers.append(srv)
            self.llm_base_url = srv.base_url + "/v1"

            docs = DocumentServer(Path(cfg.resolve(cfg.sandbox.docs_dir)), sink)
            docs.faults = self.faults
            srv = await serve(docs.app(), **at("docs"))
            self._servers.append(srv)
            self.docs_base = srv.base_url

            spy = ToolSpy(sink)
            spy.scripts, spy.faults, spy.keys_of = self.tool_scripts, self.faults, self.router.tool_keys
            srv = await serve(spy.app(), **at("tools"))
            self._servers.append(srv)
            self.tools_url = srv.base_url
        except BaseException:
            await self.stop()
            raise
        finally:
            if reserved is not None:
                reserved.close()  # what no server took (a server failed to start)
        return self

    def _upstream(self, up: str | None = None) -> str:
        up = self.config.sandbox.llm_upstream if up is None else up
        return up.replace("{port}", str(self.target_port)) if self.target_port is not None else up

    async def stop(self) -> None:
        self.faults.release_all()
        self.scripts.release_all()
        while self._servers:
            await self._servers.pop().stop()

    def placeholders(self, **extra: str) -> dict[str, str]:
        """Values for ``{...}`` in target env and case text (secrets included: never log these)."""
        return placeholders(self.config, telegram_api=self.telegram_api, whatsapp_api=self.whatsapp_api,
                            llm_base_url=self.llm_base_url, docs=self.docs_base, tools_url=self.tools_url,
                            anthropic_base_url=self.llm_base_url.removesuffix("/v1"), **extra)
