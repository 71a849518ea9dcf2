"""Shape, joining and linear algebra operators: legalization, script round trips, and numbers
from the c and python targets."""
import numpy as np

from rvm.relax import op as O
from tests.relax.transform.legalize.harness import Case, check_legalized, check_numeric, numbered

F = "float32"


def _linear_ref(x, w, b=None):
    out = x @ w.T
    return out if b is None else out + b


CASES = numbered([
    Case("matmul", O.matmul, [((2, 3), F), ((3, 4), F)], np.matmul),
    Case("matmul_batched", O.matmul, [((2, 1, 2, 3), F), ((5, 3, 4), F)], np.matmul),
    Case("matmul_vector_lhs", O.matmul, [((3,), F), ((2, 3, 4), F)], np.matmul),
    Case("matmul_vector_rhs", O.matmul, [((2, 3), F), ((3,), F)], np.matmul),
    Case("matmul_dot", O.matmul, [((3,), F), ((3,), F)], np.matmul),
    Case("matmul_symbolic", O.matmul, [(("n", 4), F), ((4, 5), F)], np.matmul, sizes={"n": 6}),
    Case("matmul_out_dtype", lambda a, b: O.matmul(a, b, out_dtype="int64"),
         [((2, 3), "int32"), ((3, 2), "int32")], lambda a, b: (a @ b).astype("int64")),
    Case("linear", O.linear, [((2, 3), F), ((4, 3), F), ((4,), F)], _linear_ref),
    Case("linear_no_bias", O.linear, [(("n", 3), F), ((4, 3), F)], _linear_ref,
         sizes={"n": 2}),
    Case("reshape", lambda x: O.reshape(x, (3, -1)), [((2, 6), F)], lambda a: a.reshape(3, -1)),
    Case("reshape_symbolic", lambda x: O.reshape(x, (-1,)), [(("n", 4), F)],
         lambda a: a.reshape(-1), sizes={"n": 5}),
    Case("reshape_symbolic_split", lambda x: O.reshape(x, (x.struct_info.shape[0], 2, 2)),
         [(("n", 4), F)], lambda a: a.reshape(-1, 2, 2), sizes={"n": 3}),
    Case("reshape_zero_size", lambda x: O.reshape(x, (0, 15)), [((3, 0, 5), F)],
         lambda a: a.reshape(0, 15)),
    Case("flatten", O.flatten, [((2, 3, 4), F)], lambda a: a.reshape(-1)),
    Case("permute_dims", lambda x: O.permute_dims(x, [1, 2, 0]), [((2, 3, 4), F)],
         lambda a: a.transpose(1, 2, 0)),
    Case("permute_dims_reverse", O.permute_dims, [(("n", 3), F)], lambda a: a.T,
         sizes={"n": 4}),
    Case("expand_dims", lambda x: O.expand_dims(x, [0, -1]), [((2, 3), F)],
         lambda a: a[None, :, :, None]),
    Case("expand_dims_int", lambda x: O.expand_dims(x, 1), [((2, 3), F)],
         lambda a: a[:, None, :]),
    Case("squeeze", lambda x: O.squeeze(x, [0, 2]), [((1, 3, 1, 2), F)],
         lambda a: a.reshape(3, 2)),
    Case("squeeze_all", O.squeeze, [((1, 3, 1), F)], lambda a: a.reshape(3)),
    Case("squeeze_symbolic", lambda x: O.squeeze(x, 1), [(("n", 1), F)],
         lambda a: a.reshape(-1), sizes={"n": 4}),
    Case("broadcast_to", lambda x: O.broadcast_to(x, (2, 3, 4)), [((3, 1), F)],
         lambda a: np.broadcast_to(a, (2, 3, 4))),
    Case("broadcast_to_symbolic",
         lambda x: O.broadcast_to(x, (x.struct_info.shape[0], 3)), [(("n", 1), F)],
         lambda a: np.broadcast_to(a, (a.shape[0], 3)), sizes={"n": 2}),
    Case("concat", lambda x, y: O.concat([x, y], axis=1), [((2, 3), F), ((2, 1), F)],
         lambda a, b: np.concatenate([a, b], axis=1)),
    Case("concat_symbolic", lambda x, y: O.concat([x, y, x]), [(("n", 2), F), (("m", 2), F)],
         lambda a, b: np.concatenate([a, b, a]), sizes={"n": 2, "m": 3}),
    Case("split_sections", lambda x: O.split(x, 3, axis=1), [((2, 7), F)],
         lambda a: tuple(np.array_split(a, [3, 6], axis=1))),
    Case("split_indices", lambda x: O.split(x, [1, 4]), [((5, 2), F)],
         lambda a: tuple(np.split(a, [1, 4]))),
    Case("split_symbolic", lambda x: O.split(x, 2), [(("n", 2), F)],
         lambda a: tuple(np.split(a, 2)), sizes={"n": 6}),
    Case("split_beyond_end", lambda x: O.split(x, [2, 9]), [((4,), F)],
         lambda a: tuple(np.split(a, [2, 9]))),
    Case("tile", lambda x: O.tile(x, [2, 1, 3]), [((2, 3), F)],
         lambda a: np.tile(a, [2, 1, 3])),
    Case("tile_symbolic", lambda x: O.tile(x, 2), [(("n", 3), F)], lambda a: np.tile(a, 2),
         sizes={"n": 2}),
    Case("repeat", lambda x: O.repeat(x, 2, axis=0), [((2, 3), F)],
         lambda a: np.repeat(a, 2, axis=0)),
    Case("repeat_flat", lambda x: O.repeat(x, 3), [((2, 2), "int32")],
         lambda a: np.repeat(a, 3)),
])


def test_legalized_and_round_trips(case):
    check_legalized(case)


def test_built_kernels_match_numpy(vm, case):
    check_numeric(vm, case)


_RESHAPE_TO_SHAPE_ARG = '''
from rvm.script import ir as I, relax as R, tir as T
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((3, 2), "float32"), s: R.Shape(["k"])):
        k = T.int64()
        y = R.reshape(x, R.shape([k, 2]))
        return y
'''


def test_a_reshape_whose_counts_are_not_proven_equal_checks_them_at_run_time():
    # The row-major index arithmetic wraps around the tensor: (3, 2) read as (4, 2) gave
    # its first row again as the fourth, with no error.
    import pytest
    import rvm
    from rvm import relax
    from rvm.relax.transform.legalize_ops import LegalizeOps
    from rvm.runtime.container import ShapeTuple
    from rvm.script import from_source
    from rvm.tir.stmt import AssertStmt
    mod = from_source(_RESHAPE_TO_SHAPE_ARG)
    kernel = LegalizeOps()(mod)["reshape"]
    assert isinstance(kernel.body.block.body, AssertStmt)
    assert kernel.attrs["op_pattern"] == 8  # not fused: a kernel of its own
    ex = relax.build(mod, target="c")
    x = np.arange(6, dtype="float32").reshape(3, 2)
    for engine in ("native", "python"):
        vm = relax.VirtualMachine(ex, rvm.cpu(), engine=engine)
        np.testing.assert_array_equal(vm["main"](x, ShapeTuple([3])).numpy(), x)
        with pytest.raises(ValueError, match=r"reshape: cannot reshape float32\[3, 2\] into "
                                             r"\[k, 2\]: the element counts differ"):
            vm["main"](x, ShapeTuple([4]))


def test_a_reshape_of_proven_counts_has_no_check():
    from rvm.relax.transform.legalize_ops import LegalizeOps
    from rvm.script import from_source
    from rvm.tir.stmt import AssertStmt
    text = _RESHAPE_TO_SHAPE_ARG.replace('(3, 2), "float32"), s: R.Shape(["k"])',
                                         '("k", 2), "float32"), s: R.Shape(["k"])')
    body = LegalizeOps()(from_source(text))["reshape"].body.block.body
    assert not isinstance(body, AssertStmt)


def test_a_reshape_checked_at_run_time_stays_out_of_fusion():
    import pytest
    import rvm
    from rvm import relax
    from rvm.runtime.container import ShapeTuple
    from rvm.script import from_source
    text = _RESHAPE_TO_SHAPE_ARG.replace(
        "y = R.reshape(x, R.shape([k, 2]))",
        "y = R.multiply(R.reshape(R.add(x, x), R.shape([k, 2])), R.const(2.0, 'float32'))")
    ex = relax.build(from_source(text), target="c")
    x = np.arange(6, dtype="float32").reshape(3, 2)
    vm = relax.VirtualMachine(ex, rvm.cpu())
    np.testing.assert_array_equal(vm["main"](x, ShapeTuple([3])).numpy(), 4 * x)
    with pytest.raises(ValueError, match="the element counts differ"):
        vm["main"](x, ShapeTuple([4]))


def test_reshapes_whose_factors_match_have_no_check():
    # (n, s, 4, 32) -> (n * s, 128): the importers' flattening of attention heads
    from rvm.relax.transform.legalize.manipulate import _same_count
    from rvm.tir import expr as E
    n, s = E.Var("n", "int64"), E.Var("s", "int64")
    c = lambda v: E.IntImm("int64", v)  # noqa: E731
    assert _same_count([n, s, c(4), c(32)], [E.Mul(n, s), c(128)])
    assert _same_count([n, c(6)], [c(2), n, c(3)])
    assert not _same_count([n, c(6)], [s, c(6)])
    assert not _same_count([n, c(6)], [n, c(5)])
