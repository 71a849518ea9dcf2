"""Operator cases checked three ways: the high-level module and its legalized form round-trip
through script (the tests/relax/transform conftest checks every module LegalizeOps sees), the
legalized module holds only call_tir, and the kernels built for the c target (and the
python reference target) compute what numpy does.

A family's cases are built together (one module, one function per case), so a test run
invokes the C compiler once per family.
"""
import numpy as np

import rvm
from rvm import relax, tir
from rvm.relax.binding import VarBinding
from rvm.relax.block_builder import BlockBuilder
from rvm.relax.expr import Call, Tuple, TupleGetItem, Var
from rvm.relax.op.registry import Op
from rvm.relax.struct_info import TensorStructInfo
from rvm.relax.transform.legalize_ops import LegalizeOps

_CALL_TIR = "relax.call_tir"


def uniform(low=-2.0, high=2.0, dtype="float32"):
    """An input maker: uniform values in [low, high)."""
    return lambda rng, shape: rng.uniform(low, high, shape).astype(dtype)


def integers(low, high, dtype="int64"):
    """An input maker: integers in [low, high)."""
    return lambda rng, shape: rng.integers(low, high, shape).astype(dtype)


def booleans():
    """An input maker: random bools."""
    return lambda rng, shape: rng.integers(0, 2, shape).astype(bool)


class Case:
    """One operator call: ``build(*vars)`` makes the Relax call from parameters of ``shapes``
    (each ``(shape, dtype)`` or ``(shape, dtype, maker)``; a dimension may be a name, a
    symbolic dimension whose value in the run is ``sizes[name]``); ``reference(*arrays)`` is
    numpy's answer (an array, or a tuple of them for a tuple-valued operator)."""

    def __init__(self, name, build, shapes, reference, rtol=1e-5, atol=1e-5, sizes=None):
        self.name = name
        self.build = build
        self.shapes = [s if len(s) == 3 else (s[0], s[1], _default_maker(s[1])) for s in shapes]
        self.reference = reference
        self.rtol = rtol
        self.atol = atol
        self.sizes = sizes or {}

    def __repr__(self):
        return self.name

    def params(self):
        """Fresh parameters of the case's shapes (symbolic dimensions shared by name)."""
        dims = {}

        def dim(d):
            if isinstance(d, str):
                return dims.setdefault(d, tir.Var(d, "int64"))
            return d

        return [Var(f"x{k}", TensorStructInfo([dim(d) for d in shape], dtype))
                for k, (shape, dtype, _) in enumerate(self.shapes)]

    def inputs(self):
        """The case's input arrays (deterministic)."""
        rng = np.random.default_rng(sum(map(ord, self.name)))
        return [maker(rng, tuple(self.sizes.get(d, 3) if isinstance(d, str) else d
                                 for d in shape))
                for shape, _, maker in self.shapes]

    def add_to(self, bb):
        """Adds ``main``-like function ``self.name`` computing the call to ``bb``."""
        params = self.params()
        with bb.function(self.name, params):
            out = bb.emit(self.build(*params))
            bb.emit_func_output(out)


def _default_maker(dtype):
    dtype = str(dtype)
    if dtype == "bool":
        return booleans()
    if dtype.startswith(("int", "uint")):
        return integers(-5, 6, dtype)
    return uniform(dtype=dtype)


def module_of(cases):
    """The module holding one function per case."""
    bb = BlockBuilder()
    for case in cases:
        case.add_to(bb)
    return bb.get()


def check_legalized(case):
    """The case's call lowers to call_tir (round trips of both forms: the conftest)."""
    mod = module_of([case])
    call = mod[case.name].body.blocks[0].bindings[0].value
    assert isinstance(call, Call) and isinstance(call.op, Op), call
    lowered = LegalizeOps()(mod)
    for binding in lowered[case.name].body.blocks[0].bindings:
        assert isinstance(binding, VarBinding)
        value = binding.value
        if isinstance(value, (Tuple, TupleGetItem, Var)):
            continue
        assert isinstance(value, Call) and value.op is Op.get(_CALL_TIR), \
            f"{case.name}: {value.op} was not legalized"
    return lowered


def build_family(cases, target="c"):
    """A VirtualMachine over the cases' module built for ``target``."""
    return relax.VirtualMachine(relax.build(module_of(cases), target=target), rvm.cpu())


def check_numeric(vm, case):
    """The built function of ``case`` returns numpy's answer."""
    inputs = case.inputs()
    expected = case.reference(*inputs)
    got = vm[case.name](*inputs)
    if isinstance(expected, tuple):
        assert len(got) == len(expected)
        for g, e in zip(got, expected):
            _compare(case, g.numpy(), e)
    else:
        _compare(case, got.numpy(), expected)


def _compare(case, got, expected):
    expected = np.asarray(expected)
    assert got.shape == expected.shape, f"{case.name}: shape {got.shape} vs {expected.shape}"
    assert got.dtype == expected.dtype, f"{case.name}: dtype {got.dtype} vs {expected.dtype}"
    if expected.dtype.kind in "biu":
        np.testing.assert_array_equal(got, expected, err_msg=case.name)
    else:
        np.testing.assert_allclose(got, expected, rtol=case.rtol, atol=case.atol,
                                   err_msg=case.name)


def numbered(cases):
    """``cases`` with unique names (a case name is a function name in the family's module)."""
    for k, case in enumerate(cases):
        case.name = f"{case.name}_{k}"
    return cases
