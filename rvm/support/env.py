"""The one place environment variables are read; everything else gets values passed down."""
import os
import pathlib


def cache_dir():
    """Directory for compiled artefacts: $RVM_CACHE_DIR, else the user's cache dir."""
    explicit = os.environ.get("RVM_CACHE_DIR")
    if explicit:
        return pathlib.Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return pathlib.Path(base) / "rvm"


def c_compiler():
    """The C compiler command: $RVM_CC, else $CC, else "cc"."""
    return os.environ.get("RVM_CC") or os.environ.get("CC") or "cc"
