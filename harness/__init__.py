"""harness: a nightly regression harness for LLM chat agents on Telegram and WhatsApp."""

__version__ = "0.1.0"
