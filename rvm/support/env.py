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


# libgomp's spin before a waiting thread sleeps (GOMP_SPINCOUNT, in pause-loop iterations):
# its default, 300000, keeps an idle or waiting thread on its core for milliseconds, which a
# descheduled peer on a loaded machine then has to wait out.
OPENMP_SPIN_COUNT = 10000


def default_openmp_wait_policy():
    """Sets GOMP_SPINCOUNT to OPENMP_SPIN_COUNT unless the user chose a wait policy
    (OMP_WAIT_POLICY or GOMP_SPINCOUNT set); True when it set it. libgomp reads it once,
    when it loads, so this only matters before the first OpenMP library is loaded."""
    if os.environ.get("OMP_WAIT_POLICY") or os.environ.get("GOMP_SPINCOUNT"):
        return False
    os.environ["GOMP_SPINCOUNT"] = str(OPENMP_SPIN_COUNT)
    return True
