"""Serialized lowered TIR: a faithful round trip, and untrusted bytes refused cleanly."""
import msgpack
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rvm.codegen.c.source import render_c_source
from rvm.codegen.c.kernel_signature import kernel_functions
from rvm.ir.expr import GlobalVar
from rvm.ir.module import IRModule
from rvm.tir.serialize import TIRFormatError, load_prim_funcs, save_prim_funcs
from rvm.tir.transform.pipeline import lower_module
from tests.codegen.kernel_cases import CASES


def _lowered(name):
    return kernel_functions(lower_module(IRModule({GlobalVar(name): CASES[name][0]()})))


@pytest.mark.parametrize("name", sorted(CASES))
def test_round_trip_renders_the_same_c(name):
    funcs = _lowered(name)
    back = load_prim_funcs(save_prim_funcs(funcs))
    assert [n for n, _ in back] == [n for n, _ in funcs]
    assert render_c_source(back, True) == render_c_source(funcs, True)


def _doc(data):
    return msgpack.unpackb(data, raw=False)


def _edit(fn):
    doc = _doc(save_prim_funcs(_lowered("add")))
    fn(doc)
    return msgpack.packb(doc, use_bin_type=True)


def _first(doc, kind):
    return next(i for i, n in enumerate(doc["nodes"]) if n[0] == kind)


@pytest.mark.parametrize("edit, message", [
    (lambda d: d.update(format=9), "format mismatch: expected 1, found 9"),
    (lambda d: d["nodes"][_first(d, "Add")].__setitem__(0, "Block"), "unknown node type"),
    (lambda d: d["nodes"][_first(d, "Add")][1].__setitem__(0, 10 ** 6),
     r"node \d+ \(Add\): expected a reference to an earlier node"),
    (lambda d: d["nodes"][_first(d, "For")][1].__setitem__(4, _first(d, "IntImm")),
     r"\(For\): expected stmt, found IntImm"),
    (lambda d: d["nodes"][_first(d, "IntImm")][1].__setitem__(1, 1 << 40),
     "does not fit int32"),
    (lambda d: d["nodes"][_first(d, "Var")][1].__setitem__(1, "float33"), "unknown dtype"),
    (lambda d: d["nodes"][_first(d, "For")][1].__setitem__(3, 17), "unknown loop kind 17"),
    (lambda d: d["funcs"][0].__setitem__(1, 0), "does not refer to a PrimFunc"),
])
def test_malformed_tir_is_refused(edit, message):
    with pytest.raises(TIRFormatError, match=message):
        load_prim_funcs(_edit(edit))


def test_not_msgpack_is_refused():
    with pytest.raises(TIRFormatError, match="not valid msgpack"):
        load_prim_funcs(b"\xc1")


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.data())
def test_mutated_bytes_load_or_raise_tir_format_error(data):
    raw = bytearray(save_prim_funcs(_lowered("softmax")))
    for _ in range(data.draw(st.integers(1, 8))):
        raw[data.draw(st.integers(0, len(raw) - 1))] = data.draw(st.integers(0, 255))
    try:
        load_prim_funcs(bytes(raw))
    except TIRFormatError:
        pass
