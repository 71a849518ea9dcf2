"""Builds tests/runtime/ext/myext.c into a shared library with the system C compiler."""
import pathlib
import subprocess

HERE = pathlib.Path(__file__).resolve().parent
INCLUDE = HERE.parents[1] / "rvm" / "include"
_loaded = []


def build_ext_library(out_dir):
    """Compiles myext.c (public header only) and returns the library path."""
    out = pathlib.Path(out_dir) / "libext.so"
    cmd = ["cc", "-shared", "-fPIC", "-O2", f"-I{INCLUDE}", str(HERE / "ext" / "myext.c"),
           "-o", str(out)]
    subprocess.run(cmd, check=True, capture_output=True, text=True)
    return out


def load_ext_library(out_dir):
    """Builds and loads the library once per process; returns its path."""
    import rvm

    if not _loaded:
        path = build_ext_library(out_dir)
        rvm.runtime.load_library(path)
        _loaded.append(path)
    return _loaded[0]
