"""load_module(path): reads a saved module file, dispatching on its magic bytes.

File formats register a loader for their magic (the bytecode package registers
executables when it is imported), so this layer needs no knowledge of them.
As in TVM, a format can also be loaded by the global function
``runtime.module.loadfile_<fmt>`` (or ``module.loadfile_<fmt>``) taking the
path: ``load_module(path, fmt)`` calls it, and so does ``load_module(path)``
for a file no magic matches, with ``fmt`` its extension.
"""
import os

from rvm.runtime.module import Module
from rvm.runtime.packed_func import get_global_func

LOADFILE_PREFIXES = ("runtime.module.loadfile_", "module.loadfile_")

_FILE_LOADERS = []  # (magic, loader, description)


def register_file_loader(magic, loader, description):
    """Registers ``loader(path, trust_native=False) -> Module`` for files starting with
    ``magic`` (bytes)."""
    if not isinstance(magic, bytes) or not magic:
        raise TypeError(f"register_file_loader: magic must be non-empty bytes, got {magic!r}")
    for i, (known, _, _) in enumerate(_FILE_LOADERS):
        if known == magic:
            _FILE_LOADERS[i] = (magic, loader, description)
            return
    _FILE_LOADERS.append((magic, loader, description))


def _file_loader(fmt):
    """(name, function) of the registered ``loadfile`` global function of fmt, or None."""
    for prefix in LOADFILE_PREFIXES:
        func = get_global_func(prefix + fmt, allow_missing=True) if fmt else None
        if func is not None:
            return prefix + fmt, func
    return None


def _load_by_format(path, loader):
    name, func = loader
    module = func(str(path))
    if not isinstance(module, Module):
        raise TypeError(f"'{name}' must return an rvm.runtime.Module, got "
                        f"{type(module).__name__}")
    return module


def load_module(path, fmt="", trust_native=False, allow=None, max_file_bytes=None):
    """Loads the module saved at ``path`` (e.g. an executable from ``export_library``).

    ``fmt`` names a format loaded by a registered ``runtime.module.loadfile_<fmt>`` /
    ``module.loadfile_<fmt>`` global function (module docstring).

    The file is untrusted: its kernels are regenerated from their TensorIR
    and checked. ``trust_native=True`` also loads modules of hand-written
    native code (BYOC C sources), which then run unchecked. The file may call
    the VM builtins and the global functions your code registered; ``allow``
    (a list of names) instead permits the VM builtins and exactly those names.
    Other registered globals (rvm's internal ones) are refused at load.
    ``max_file_bytes`` raises an executable's file-size limit (32 MiB by default, so
    that the largest file loads in bounded time and memory) for a larger model you
    trust to that extent. ValueError if the file's format has no registered loader.
    """
    if fmt:
        loader = _file_loader(fmt)
        if loader is None:
            raise ValueError(f"load_module: no loader for format '{fmt}': register the global "
                             f"function 'runtime.module.loadfile_{fmt}'")
        return _load_by_format(path, loader)
    longest = max((len(m) for m, _, _ in _FILE_LOADERS), default=0)
    with open(path, "rb") as f:
        head = f.read(longest)
    for magic, loader, _ in _FILE_LOADERS:
        if head.startswith(magic):
            options = {k: v for k, v in (("allow", allow), ("max_file_bytes", max_file_bytes))
                       if v is not None}
            return loader(path, trust_native=trust_native, **options)
    extension = os.path.splitext(str(path))[1].lstrip(".")
    loader = _file_loader(extension)
    if loader is not None:
        return _load_by_format(path, loader)
    known = ", ".join(d for _, _, d in _FILE_LOADERS) or "none registered"
    raise ValueError(f"load_module: '{path}' is not a known module file (leading bytes "
                     f"{head[:8]!r}); known formats: {known}")
