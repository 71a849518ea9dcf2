"""What the TVM-style programs share: build a module and run it on both VM engines."""
import numpy as np

import rvm
from rvm import relax
from rvm.ir import assert_structural_equal
from rvm.script import from_source

ENGINES = ("python", "native")


def round_trip(mod):
    """``mod`` printed and parsed back is structurally equal to it; returns ``mod``."""
    assert_structural_equal(from_source(mod.script(show_meta=True)), mod)
    return mod


def run(mod, *args, func="main", engine="native"):
    """``func`` of ``mod`` built (target "c") and called on ``args`` (numpy arrays or
    values) on ``engine``."""
    ex = relax.build(mod)
    vm = relax.VirtualMachine(ex, rvm.cpu(), engine=engine)
    args = [rvm.nd.array(a) if isinstance(a, np.ndarray) else a for a in args]
    return vm[func](*args)


def run_both(mod, *args, func="main"):
    """The results of ``func`` on both engines (as numpy arrays), after checking they agree."""
    results = [run(mod, *[a.copy() if isinstance(a, np.ndarray) else a for a in args],
                   func=func, engine=e) for e in ENGINES]
    results = [r.numpy() if hasattr(r, "numpy") else r for r in results]
    np.testing.assert_array_equal(results[0], results[1])
    return results[0]
