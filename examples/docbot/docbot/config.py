"""Configuration from the environment (docs/DOCBOT_CONTRACT.md, "Environment")."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Mapping

from . import regressions

#: Platforms docbot writes posts for, with their character limits and display names.
PLATFORMS: dict[str, int] = {
    "twitter": 280, "linkedin": 3000, "facebook": 2000, "instagram": 2200, "whatsapp": 1000,
}
PLATFORM_NAMES = {
    "twitter": "Twitter", "linkedin": "LinkedIn", "facebook": "Facebook",
    "instagram": "Instagram", "whatsapp": "WhatsApp",
}


@dataclass(frozen=True)
class Config:
    host: str
    port: int
    public_url: str
    telegram_api_base: str
    telegram_token: str
    telegram_secret: str
    whatsapp_api_base: str
    whatsapp_api_version: str
    whatsapp_phone_id: str
    whatsapp_token: str
    whatsapp_app_secret: str
    whatsapp_verify_token: str
    publish_to: str
    openai_base_url: str
    openai_api_key: str
    summary_model: str
    post_model: str
    db_path: str
    fetch_allow: tuple[str, ...]
    max_words: int
    regressions: frozenset[str]
    fetch_timeout: float = 10.0
    llm_timeout: float = 120.0

    def on(self, name: str) -> bool:
        """Is seeded regression ``name`` switched on?"""
        assert name in regressions.NAMES, name
        return name in self.regressions

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> "Config":
        """Read the environment; raises regressions.UnknownRegression for unknown names."""
        e = os.environ if env is None else env

        def get(name: str, default: str = "") -> str:
            v = e.get(name)
            return default if v is None or v == "" else v

        port = int(get("DOCBOT_PORT", "8081"))
        local = f"http://127.0.0.1:{port}"
        allow = tuple(h.strip().lower() for h in get("DOCBOT_FETCH_ALLOW", "127.0.0.1,localhost")
                      .split(",") if h.strip())
        return cls(
            host=get("DOCBOT_HOST", "127.0.0.1"),
            port=port,
            public_url=get("DOCBOT_PUBLIC_URL", local).rstrip("/"),
            telegram_api_base=get("TELEGRAM_API_BASE", "https://api.telegram.org").rstrip("/"),
            telegram_token=get("TELEGRAM_BOT_TOKEN"),
            telegram_secret=e.get("TELEGRAM_WEBHOOK_SECRET", "") or "",
            whatsapp_api_base=get("WHATSAPP_API_BASE", "https://graph.facebook.com").rstrip("/"),
            whatsapp_api_version=get("WHATSAPP_API_VERSION", "v21.0"),
            whatsapp_phone_id=get("WHATSAPP_PHONE_NUMBER_ID"),
            whatsapp_token=get("WHATSAPP_TOKEN"),
            whatsapp_app_secret=get("WHATSAPP_APP_SECRET"),
            whatsapp_verify_token=get("WHATSAPP_VERIFY_TOKEN"),
            publish_to=get("DOCBOT_PUBLISH_TO", "15550001111"),
            openai_base_url=get("OPENAI_BASE_URL", f"{local}/offline/v1").rstrip("/"),
            openai_api_key=get("OPENAI_API_KEY", "offline"),
            summary_model=get("DOCBOT_SUMMARY_MODEL", "llama-3.1-8b-instant"),
            post_model=get("DOCBOT_POST_MODEL", "claude-3-sonnet-20240229"),
            db_path=get("DOCBOT_DB", "./docbot.sqlite3"),
            fetch_allow=allow,
            max_words=int(get("DOCBOT_MAX_WORDS", "1500")),
            regressions=regressions.parse(e.get("DOCBOT_REGRESSION", "")),
            llm_timeout=float(get("DOCBOT_LLM_TIMEOUT", "120")),  # seconds per LLM call attempt
        )
