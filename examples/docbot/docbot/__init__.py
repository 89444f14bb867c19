"""docbot: the reference agent (Telegram/WhatsApp document summarizer).

See docs/DOCBOT_CONTRACT.md at the repository root for the observable contract.
"""

__version__ = "0.1.0"
