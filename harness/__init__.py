"""harness: a nightly regression harness for LLM chat agents on Telegram and WhatsApp."""

_version: str | None = None


def version() -> str:
    """The installed package's version (its metadata, pyproject.toml's ``version``); a source
    tree run without being installed reads pyproject.toml itself."""
    global _version
    if _version is None:
        from importlib.metadata import PackageNotFoundError, version as installed

        try:
            _version = installed("harness")
        except PackageNotFoundError:
            _version = _source_version()
    return _version


def _source_version() -> str:
    import tomllib
    from pathlib import Path

    try:
        with open(Path(__file__).resolve().parents[1] / "pyproject.toml", "rb") as fh:
            return str(tomllib.load(fh)["project"]["version"])
    except (OSError, KeyError, ValueError):
        return "unknown"


def __getattr__(name: str):
    if name == "__version__":  # from the metadata on first use (``from harness import __version__``)
        return version()
    raise AttributeError(f"module 'harness' has no attribute {name!r}")
