"""Targets: what a build compiles for, written as TVM writes it (``"llvm --num-cores=4"``).

A target is a kind (``llvm``, ``c``, ``python``) plus typed attributes. Our
kernels are C compiled by the system compiler, so ``llvm`` and ``c`` both
mean native code for this machine; ``python`` is the reference
interpreter. The attributes a tuner or code generator reads (``num-cores``,
``mcpu``, ``mattr``...) are parsed, typed and checked here once. ``relax.build``
carries the Target to the code generator: ``-mcpu``/``-mattr`` become the C
compiler's flags (``compiler_flags``) and set the vector width the default
schedules use, ``-num-cores`` caps the threads of the kernels' parallel loops.

>>> t = Target("llvm -mcpu=skylake --num-cores=4")
>>> t.kind.name, t.attrs["num-cores"], t.mcpu
('llvm', 4, 'skylake')
>>> str(t)
'llvm -keys=cpu -mcpu=skylake -num-cores=4'
"""
import re
import shlex
import threading


def _as_bool(text):
    lowered = str(text).strip().lower()
    if lowered in ("1", "true", "yes", "on"):
        return True
    if lowered in ("0", "false", "no", "off"):
        return False
    raise ValueError(f"expected a boolean (true/false), got {text!r}")


def _as_list(text):
    if isinstance(text, (list, tuple)):
        return [str(v) for v in text]
    return [part for part in str(text).split(",") if part]


_CONVERT = {int: int, str: str, bool: _as_bool, list: _as_list}

# Attributes every kind accepts, then each kind's own (name -> type).
_COMMON_ATTRS = {"keys": list, "libs": list, "device": str, "model": str, "tag": str,
                 "host": str}
_CPU_ATTRS = {"mcpu": str, "mtriple": str, "mattr": list, "mabi": str, "march": str,
              "num-cores": int, "opt-level": int, "system-lib": bool, "fast-math": bool,
              "vector-width": int, "link-params": bool, "runtime": str, "jit": str}


class TargetKind:
    """A kind of target: its name, default keys and the attributes it accepts."""

    def __init__(self, name, attrs, default_keys, description):
        self.name = name
        self.attrs = dict(_COMMON_ATTRS, **attrs)
        self.default_keys = list(default_keys)
        self.description = description

    def __repr__(self):
        return f"TargetKind({self.name!r})"

    def __str__(self):
        return self.name

    def __eq__(self, other):
        if isinstance(other, TargetKind):
            return self.name == other.name
        return isinstance(other, str) and other == self.name

    def __hash__(self):
        return hash(self.name)


KINDS = {
    "llvm": TargetKind("llvm", _CPU_ATTRS, ["cpu"], "native code for this CPU (compiled C)"),
    "c": TargetKind("c", _CPU_ATTRS, ["cpu"], "native code for this CPU (compiled C)"),
    "python": TargetKind("python", {}, ["cpu"], "the reference interpreter of lowered TIR"),
}

_CURRENT = threading.local()
_CPU_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")
_FEATURE = re.compile(r"[+-][A-Za-z0-9][A-Za-z0-9_.-]*")


def _parse_text(text):
    """(kind name, {attr: raw value}) of ``"llvm -mcpu=x --num-cores=4"``."""
    try:
        words = shlex.split(text)
    except ValueError as err:
        raise ValueError(f"cannot parse target {text!r}: {err}") from None
    if not words:
        raise ValueError("empty target string; expected a kind such as 'llvm' or 'c'")
    kind, raw = words[0], {}
    for word in words[1:]:
        if not word.startswith("-"):
            raise ValueError(f"target {text!r}: expected '-name=value' options after the kind, "
                             f"got {word!r}")
        name, eq, value = word.lstrip("-").partition("=")
        raw[name] = value if eq else "true"
    return kind, raw


class Target:
    """A compilation target: ``Target("llvm --num-cores=1")``, ``Target("c")``, a dict
    ``{"kind": "llvm", "mcpu": "skylake"}``, or another Target (copied). ``host`` is
    accepted as in TVM (the host of a CPU target is itself).

    Used as a context manager it becomes ``Target.current()``.
    """

    def __init__(self, target, host=None):
        if isinstance(target, Target):
            kind, raw = target.kind.name, dict(target.attrs)
        elif isinstance(target, dict):
            raw = dict(target)
            kind = raw.pop("kind", None)
            if kind is None:
                raise ValueError(f"a target dict needs a 'kind' entry, got {sorted(target)}")
        elif isinstance(target, str):
            kind, raw = _parse_text(target)
        else:
            raise TypeError(f"Target expects a str, dict or Target, got {type(target).__name__}")
        if kind not in KINDS:
            raise ValueError(f"unknown target {kind!r}; expected a target kind among "
                             f"{sorted(KINDS)}")
        self.kind = KINDS[kind]
        self.attrs = self._convert(raw)
        self.attrs.setdefault("keys", list(self.kind.default_keys))
        if host is not None:
            host = host if isinstance(host, Target) else Target(host)
        self.host = host

    def _convert(self, raw):
        attrs = {}
        for name, value in raw.items():
            expected = self.kind.attrs.get(name)
            if expected is None:
                raise ValueError(f"target kind {self.kind.name!r} has no attribute {name!r}; "
                                 f"it accepts {sorted(self.kind.attrs)}")
            try:
                attrs[name] = _CONVERT[expected](value)
            except (TypeError, ValueError) as err:
                raise ValueError(f"target attribute {name!r} expects {expected.__name__}, got "
                                 f"{value!r}: {err}") from None
        return attrs

    # -- TVM's accessors ---------------------------------------------------------------
    @property
    def keys(self):
        """The target's keys (``["cpu"]`` for CPU kinds)."""
        return list(self.attrs["keys"])

    @property
    def mcpu(self):
        """The ``-mcpu`` attribute ("" when absent)."""
        return self.attrs.get("mcpu", "")

    @property
    def mattr(self):
        """The ``-mattr`` feature list ([] when absent)."""
        return list(self.attrs.get("mattr", []))

    @property
    def num_cores(self):
        """The ``-num-cores`` attribute (None when absent: use every core)."""
        return self.attrs.get("num-cores")

    def compiler_flags(self):
        """The C compiler flags of the target's CPU: ``-march=<mcpu>`` (none for "" or
        "native": the host's, ``-march=native``) and one ``-m<feature>`` / ``-mno-<feature>``
        per ``+feature`` / ``-feature`` of ``-mattr``.

        >>> Target("llvm -mcpu=haswell -mattr=+fma,-avx512f").compiler_flags()
        ['-march=haswell', '-mfma', '-mno-avx512f']
        """
        if self.kind.name == "python":
            return []
        flags = []
        mcpu = self.mcpu
        if mcpu and mcpu != "native":
            if not _CPU_NAME.fullmatch(mcpu):
                raise ValueError(f"target attribute 'mcpu' expects a CPU name such as "
                                 f"'haswell' or 'znver3', got {mcpu!r}")
            flags.append(f"-march={mcpu}")
        for feature in self.mattr:
            if not _FEATURE.fullmatch(feature):
                raise ValueError(f"target attribute 'mattr' expects features written "
                                 f"'+name' or '-name' (such as '+avx2,-avx512f'), got "
                                 f"{feature!r}")
            name = feature[1:].lower()
            flags.append(f"-m{name}" if feature[0] == "+" else f"-mno-{name}")
        return flags

    def export(self):
        """The target as a dict (``Target(t.export())`` is ``t`` again)."""
        out = {"kind": self.kind.name}
        out.update({k: list(v) if isinstance(v, list) else v for k, v in self.attrs.items()})
        return out

    def with_host(self, host):
        """A copy with ``host`` set."""
        return Target(self, host=host)

    # -- the current target ------------------------------------------------------------
    @staticmethod
    def current(allow_none=True):
        """The innermost Target entered with ``with``; None (or an error) outside any."""
        stack = getattr(_CURRENT, "stack", [])
        if stack:
            return stack[-1]
        if allow_none:
            return None
        raise ValueError("no target is set; use 'with Target(...):'")

    def __enter__(self):
        if not hasattr(_CURRENT, "stack"):
            _CURRENT.stack = []
        _CURRENT.stack.append(self)
        return self

    def __exit__(self, *exc):
        _CURRENT.stack.pop()

    # -- values ------------------------------------------------------------------------
    def __str__(self):
        parts = [self.kind.name]
        for name in sorted(self.attrs):
            value = self.attrs[name]
            if isinstance(value, list):
                value = ",".join(value)
            elif isinstance(value, bool):
                value = str(value).lower()
            parts.append(f"-{name}={value}")
        return " ".join(parts)

    def __repr__(self):
        return f"Target({str(self)!r})"

    def __eq__(self, other):
        if isinstance(other, str):
            try:
                other = Target(other)
            except (TypeError, ValueError):
                return False
        return isinstance(other, Target) and str(self) == str(other)

    def __hash__(self):
        return hash(str(self))


def as_target(target, default="c"):
    """``target`` (a str, dict, Target or None for ``default``, then ``Target.current()``) as a
    Target."""
    if target is None:
        target = Target.current() or default
    return target if isinstance(target, Target) else Target(target)
