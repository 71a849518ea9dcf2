"""The tuning target: which kernel backend, and how many cores the schedules may use.

Targets are written as TVM writes them: ``"llvm --num-cores=1"``, ``"c"``,
``"llvm -mcpu=znver4 -num-cores 2"``. Every CPU kind compiles through the C
backend; ``num_cores`` bounds the parallelism the default search space asks
for (the machine's core count when absent). Other ``-key value`` options are
kept in ``attrs`` and otherwise ignored.

>>> t = Target("llvm --num-cores=1")
>>> t.kind, t.num_cores, str(t)
('c', 1, 'llvm --num-cores=1')
>>> Target("c").kind
'c'
"""
import os

CPU_KINDS = ("c", "llvm")
KINDS = CPU_KINDS + ("python",)


class Target:
    """A parsed target string; ``kind`` is the kernel backend ("c" or "python")."""

    def __init__(self, target="c"):
        if isinstance(target, Target):
            target = target.text
        elif not isinstance(target, str):
            kind = getattr(target, "kind", None)  # a Target-like object from elsewhere
            if kind is None:
                raise TypeError(f"target must be a string such as 'llvm --num-cores=1', got "
                                f"{type(target).__name__} {target!r}")
            target = str(target)
        words = target.split()
        if not words or words[0] not in KINDS:
            raise ValueError(f"unknown target {target!r}; expected one of {', '.join(KINDS)} "
                             "followed by options such as --num-cores=N")
        self.text = " ".join(words)
        self.kind = "python" if words[0] == "python" else "c"
        self.attrs = _parse_options(words[1:], target)
        cores = self.attrs.get("num-cores")
        if cores is None:
            self.num_cores = os.cpu_count() or 1
        else:
            try:
                self.num_cores = int(cores)
            except ValueError:
                self.num_cores = 0
            if self.num_cores < 1:
                raise ValueError(f"target {target!r}: --num-cores expects a positive integer, "
                                 f"got {cores!r}")

    def __eq__(self, other):
        return isinstance(other, Target) and self.text == other.text

    def __hash__(self):
        return hash(self.text)

    def __str__(self):
        return self.text

    def __repr__(self):
        return f"Target({self.text!r})"


def _parse_options(words, target):
    """``-k v``, ``--k=v``, ``-flag`` -> {k: v or True}."""
    attrs = {}
    i = 0
    while i < len(words):
        word = words[i]
        if not word.startswith("-"):
            raise ValueError(f"target {target!r}: expected an option starting with '-', "
                             f"got {word!r}")
        key = word.lstrip("-")
        if "=" in key:
            key, value = key.split("=", 1)
        elif i + 1 < len(words) and not words[i + 1].startswith("-"):
            value = words[i + 1]
            i += 1
        else:
            value = True
        attrs[key.replace("_", "-")] = value
        i += 1
    return attrs
