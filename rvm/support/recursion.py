"""Room for the recursion of IR walks over deeply nested trees.

The visitors, mutators and printers of the IR recurse once per level of nesting,
a few Python frames each, and a kernel nests deeply: after lowering, every
intermediate buffer is an ``Allocate`` and a ``DeclBuffer`` around the rest of
the body, so a fused kernel of 200 operators is about 400 levels and 1,200
frames, past Python's default limit of 1,000. ``deep_recursion()`` raises the
interpreter's recursion limit to ``DEPTH`` while a pass or a build runs and puts
it back when the last such caller (on any thread) leaves. These walks recurse
through Python frames, which CPython keeps on the heap, not on the C stack.

>>> import sys
>>> before = sys.getrecursionlimit()
>>> with deep_recursion():
...     sys.getrecursionlimit() >= DEPTH
True
>>> sys.getrecursionlimit() == before
True
"""
import contextlib
import sys
import threading

DEPTH = 20_000

_lock = threading.Lock()
_holders = 0
_saved = None


@contextlib.contextmanager
def deep_recursion():
    """Raises the recursion limit to at least ``DEPTH`` for the ``with`` block."""
    global _holders, _saved
    with _lock:
        if _holders == 0:
            _saved = sys.getrecursionlimit()
            sys.setrecursionlimit(max(_saved, DEPTH))
        _holders += 1
    try:
        yield
    finally:
        with _lock:
            _holders -= 1
            if _holders == 0:
                sys.setrecursionlimit(_saved)
