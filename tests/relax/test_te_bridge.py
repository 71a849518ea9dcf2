"""emit_te / call_te: TE functions applied to Relax values (SPEC section 8)."""
import numpy as np
import pytest

from rvm import te, tir
from rvm.ir.base import structural_equal
from rvm.relax.analysis.well_formed import well_formed, well_formed_errors
from rvm.relax.binding import DataflowBlock
from rvm.relax.block_builder import BlockBuilder
from rvm.relax.expr import Call, DataflowVar, ShapeExpr, Tuple, Var, const
from rvm.relax.struct_info import TensorStructInfo, TupleStructInfo
from rvm.tir.function import PrimFunc


def te_matmul(A, B):
    assert A.shape[1] == B.shape[0]
    n = A.shape[0]
    m = B.shape[1]
    k = te.reduce_axis((0, A.shape[1]), name="k")
    return te.compute((n, m), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="matmul")


def te_relu(A):
    return te.compute(A.shape, lambda i, j: te.max(A[i, j], 0), name="relu")


def _spec_program():
    A = Var("A", TensorStructInfo((128, 128), "float32"))
    B = Var("B", TensorStructInfo((128, 128), "float32"))
    bb = BlockBuilder()
    with bb.function("main"):
        with bb.dataflow():
            C = bb.emit_te(te_matmul, A, B)
            D = bb.emit_te(te_relu, C)
            R = bb.emit_output(D)
        bb.emit_func_output(R, params=[A, B])
    return bb.get(), C


def test_spec_section_8_program():
    mod, C = _spec_program()
    assert type(C) is DataflowVar
    assert [gv.name_hint for gv in mod.get_global_vars()] == ["te_matmul", "te_relu", "main"]
    for name in ("te_matmul", "te_relu"):
        assert isinstance(mod[name], PrimFunc)
        assert mod[name].get_attr("global_symbol") is None  # private kernels
    (block,) = mod["main"].body.blocks
    assert isinstance(block, DataflowBlock)
    calls = [b.value for b in block.bindings if isinstance(b.value, Call)]
    assert [c.op.name for c in calls] == ["relax.call_tir", "relax.call_tir"]
    assert [c.args[0].name_hint for c in calls] == ["te_matmul", "te_relu"]
    assert calls[1].args[1].fields[0] is C
    out = calls[0].sinfo_args[0]
    assert [d.value for d in out.shape_values] == [128, 128] and out.dtype == "float32"
    # placeholders are named after the Relax variables
    assert [p.name for p in mod["te_relu"].buffer_map.values()][0] == "lv"
    assert well_formed(mod, raise_error=True)


def test_spec_section_6_swap_a_kernel():
    mod, _ = _spec_program()
    gv = mod.get_global_var("te_relu")
    X = te.placeholder((128, 128), "float32", name="X")
    tuned = te.create_prim_func([X, te.compute(X.shape, lambda i, j: te.max(X[i, j], 0.0))])
    mod.update_func(gv, tuned.without_attr("global_symbol"))
    assert mod["te_relu"] is not None and well_formed(mod)
    mod.remove(gv)
    assert any("call_tir names function 'te_relu'" in e for e in well_formed_errors(mod))


def test_symbolic_shapes_flow_through():
    n = tir.Var("n", "int64")
    x = Var("x", TensorStructInfo((n, 64), "float32"))
    w = Var("w", TensorStructInfo((64, 32), "float32"))
    bb = BlockBuilder()
    with bb.function("main", params=[x, w]):
        with bb.dataflow():
            y = bb.emit_te(te_matmul, x, w)
            out = bb.emit_output(y)
        bb.emit_func_output(out)
    mod = bb.get()
    assert y.struct_info.shape_values[0] is n
    assert len(mod["main"].body.blocks[0].bindings[0].value.args) == 2
    assert well_formed(mod, raise_error=True)


def test_output_only_symbolic_var_becomes_tir_vars_argument():
    m = tir.Var("m", "int64")
    x = Var("x", TensorStructInfo((4,), "float32"))

    def broadcast_first(a, size):
        return te.compute((size,), lambda i: a[0], name="bcast")

    bb = BlockBuilder()
    with bb.function("main", params=[x]):
        y = bb.emit_te(broadcast_first, x, m)
        bb.emit_func_output(y)
    mod = bb.get()
    call = mod["main"].body.blocks[0].bindings[0].value
    assert len(call.args) == 3 and isinstance(call.args[2], ShapeExpr)
    assert call.args[2].values[0] is m
    assert mod["broadcast_first"].params[-1] is m
    # m is defined nowhere in main: well_formed names it
    assert any("symbolic variable 'm'" in e for e in well_formed_errors(mod))


def test_identical_kernels_are_shared_and_names_stay_unique():
    x = Var("x", TensorStructInfo((8, 8), "float32"))
    y = Var("y", TensorStructInfo((4, 4), "float32"))
    bb = BlockBuilder()
    with bb.function("main", params=[x, y]):
        a = bb.emit_te(te_relu, x)
        bb.emit_te(te_relu, a)
        bb.emit_te(te_relu, y)
        out = bb.emit_te(te_relu, y, primfunc_name_hint="relu_small", name_hint="out")
        bb.emit_func_output(out)
    mod = bb.get()
    assert [gv.name_hint for gv in mod.get_global_vars()] == ["te_relu", "te_relu1", "main"]
    assert out.name_hint == "out"


def test_constants_tuples_and_multiple_outputs():
    x = Var("x", TensorStructInfo((2, 3), "float32"))
    w = const(np.ones((3, 4), "float32"))

    def split_add(pair):
        a, b = pair
        return [te.compute(a.shape, lambda i, j: a[i, j] + 1, name="p"),
                te.compute(b.shape, lambda i, j: b[i, j] * 2, name="q")]

    bb = BlockBuilder()
    with bb.function("main", params=[x]):
        y = bb.emit_te(te_matmul, x, w)
        pair = bb.emit_te(split_add, Tuple([x, y]))
        bb.emit_func_output(pair)
    mod = bb.get()
    assert [d.value for d in y.struct_info.shape_values] == [2, 4]
    assert [b.name for b in mod["te_matmul"].buffer_map.values()][:2] == ["x", "B"]
    assert isinstance(pair.struct_info, TupleStructInfo) and len(pair.struct_info.fields) == 2
    p = Var("p", pair.struct_info)
    with bb.function("again", params=[p]):
        twice = bb.emit_te(split_add, p)  # a tuple-valued variable: its items are bound
        bb.emit_func_output(twice)
    bindings = bb.get()["again"].body.blocks[0].bindings
    assert [type(b.value).__name__ for b in bindings] == ["TupleGetItem", "TupleGetItem", "Call"]
    assert well_formed(bb.get(), raise_error=True)
    assert well_formed(mod, raise_error=True)


def test_call_te_does_not_emit():
    x = Var("x", TensorStructInfo((2, 2), "float32"))
    bb = BlockBuilder()
    with bb.function("main", params=[x]):
        call = bb.call_te(te_relu, x)
        assert isinstance(call, Call) and call.op.name == "relax.call_tir"
        bb.emit_func_output(bb.emit(call))
    assert len(bb.get()["main"].body.blocks[0].bindings) == 1


def test_errors():
    bb = BlockBuilder()
    x = Var("x", TensorStructInfo(ndim=2, dtype="float32"))
    with pytest.raises(ValueError, match="argument 'x' needs a known shape"):
        with bb.function("main", params=[x]):
            bb.emit_te(te_relu, x)
    z = Var("z", TensorStructInfo((2, 2), "float32"))
    with pytest.raises(TypeError, match="must return a te.Tensor"):
        with bb.function("g", params=[z]):
            bb.emit_te(lambda a: 3, z)
    with pytest.raises(TypeError, match="TE function"):
        with bb.function("h", params=[z]):
            bb.emit_te("te_relu", z)


def test_same_module_twice_is_structurally_equal():
    assert structural_equal(_spec_program()[0], _spec_program()[0])


@pytest.mark.frontend
def test_seed_from_fx_translator_runs_on_our_api():
    """The user-written from_fx of the seed notes, as written there (torch optional)."""
    torch = pytest.importorskip("torch")
    from torch import fx, nn

    from rvm import relax

    class MyModel(nn.Module):
        def __init__(self):
            super().__init__()
            self.weight = nn.Parameter(torch.randn(128, 128))

        def forward(self, x):
            x = torch.matmul(x, self.weight)
            x = torch.relu(x)
            return x

    def map_param(param):
        return relax.const(param.data.cpu().numpy(),
                           relax.TensorStructInfo(param.data.shape, "float32"))

    def fetch_attr(fx_mod, target):
        attr_itr = fx_mod
        for atom in target.split("."):
            attr_itr = getattr(attr_itr, atom)
        return attr_itr

    def from_fx(fx_mod, input_shapes, call_function_map, call_module_map):
        input_index = 0
        node_map = {}
        named_modules = dict(fx_mod.named_modules())
        bb = relax.BlockBuilder()
        fn_inputs = []
        fn_output = None
        with bb.function("main"):
            with bb.dataflow():
                for node in fx_mod.graph.nodes:
                    if node.op == "placeholder":
                        shape = input_shapes[input_index]
                        input_index += 1
                        input_var = relax.Var(node.target, relax.TensorStructInfo(shape, "float32"))
                        fn_inputs.append(input_var)
                        node_map[node] = input_var
                    elif node.op == "get_attr":
                        node_map[node] = map_param(fetch_attr(fx_mod, node.target))
                    elif node.op == "call_function":
                        node_map[node] = call_function_map[node.target](bb, node_map, node)
                    elif node.op == "call_module":
                        named_module = named_modules[node.target]
                        node_map[node] = call_module_map[type(named_module)](
                            bb, node_map, node, named_module)
                    elif node.op == "output":
                        output = node_map[node.args[0]]
                        assert fn_output is None
                        fn_output = bb.emit_output(output)
            bb.emit_func_output(output, fn_inputs)
        return bb.get()

    def map_matmul(bb, node_map, node):
        return bb.emit_te(te_matmul, node_map[node.args[0]], node_map[node.args[1]])

    def map_relu(bb, node_map, node):
        return bb.emit_te(te_relu, node_map[node.args[0]])

    mod = from_fx(fx.symbolic_trace(MyModel()), input_shapes=[(1, 128)],
                  call_function_map={torch.matmul: map_matmul, torch.relu: map_relu},
                  call_module_map={})
    assert [gv.name_hint for gv in mod.get_global_vars()] == ["te_matmul", "te_relu", "main"]
    main = mod["main"]
    assert [p.name_hint for p in main.params] == ["x"]
    weight = main.body.blocks[0].bindings[0].value.args[1].fields[1]
    assert isinstance(weight, relax.Constant) and tuple(weight.data.shape) == (128, 128)
    assert relax.analysis.well_formed(mod, raise_error=True)


def test_lambda_kernels_get_an_identifier_name():
    from rvm import relax, te

    a = relax.Var("a", relax.TensorStructInfo((4,), "float32"))
    bb = relax.BlockBuilder()
    with bb.function("main", params=[a]):
        with bb.dataflow():
            out = bb.emit_output(bb.emit_te(lambda x: te.compute(x.shape, lambda i: x[i] + 1.0),
                                            a))
        bb.emit_func_output(out)
    names = [gv.name_hint for gv in bb.get().get_global_vars()]
    assert "te_func" in names and all(n.isidentifier() for n in names)


def test_variable_inside_an_input_expression_becomes_tir_vars_argument():
    """An input of shape (n * n,) cannot bind n in the kernel: n is passed (as in TVM), and
    main binds it from x."""
    n = tir.Var("n", "int64")
    y = Var("y", TensorStructInfo((n * n,), "float32"))
    x = Var("x", TensorStructInfo((n,), "float32"))
    bb = BlockBuilder()
    with bb.function("main", params=[y, x]):
        out = bb.emit_te(lambda a: te.compute(a.shape, lambda i: a[i] * 2.0, name="s"), y)
        bb.emit_func_output(out)
    call = bb.get()["main"].body.blocks[0].bindings[0].value
    assert [v.name_hint for v in call.args[2].values] == ["n"]
    kernel = bb.get()["te_func"]
    assert kernel.params[-1].name_hint == "n" and kernel.params[-1].dtype == "int64"
