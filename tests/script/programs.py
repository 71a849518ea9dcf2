"""Script programs and builder-made modules shared by the script tests.

The sources are SPEC.md §3's module and seed 004's listings as users write
them; the builders make the same kinds of modules through the Python APIs
(TIR constructors, te, BlockBuilder).
"""
import pathlib

import numpy as np

from rvm import relax, te
from rvm.relax.struct_info import TensorStructInfo
from rvm.script import from_source
from rvm.tir import expr as _e
from rvm.tir import stmt as _s
from rvm.tir.buffer import decl_buffer
from rvm.tir.function import PrimFunc
from tests.spec_programs import (  # noqa: F401  (re-exported for the script tests)
    LINEAR0, MY_MODULE, MY_MODULE_MIXTURE, MY_MODULE_WITH_EXTERN_CALL, RELU0, mlp_params,
)

# Seed 004 §5.4: the static-shape MyModuleMixture with T.Buffer parameters and func_attr.
MY_MODULE_MIXTURE_STATIC = '''
@I.ir_module
class MyModuleMixture:
    @T.prim_func
    def linear0(X: T.Buffer((1, 784), "float32"),
                W: T.Buffer((128, 784), "float32"),
                B: T.Buffer((128,), "float32"),
                Z: T.Buffer((1, 128), "float32")):
        T.func_attr({"global_symbol": "linear0", "tir.noalias": True})
        Y = T.alloc_buffer((1, 128), "float32")
        for i, j, k in T.grid(1, 128, 784):
            with T.block("Y"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    Y[vi, vj] = T.float32(0)
                Y[vi, vj] = Y[vi, vj] + X[vi, vk] * W[vj, vk]
        for i, j in T.grid(1, 128):
            with T.block("Z"):
                vi, vj = T.axis.remap("SS", [i, j])
                Z[vi, vj] = Y[vi, vj] + B[vj]

    @R.function
    def main(x: R.Tensor((1, 784), "float32"),
             w0: R.Tensor((128, 784), "float32"),
             b0: R.Tensor((128,), "float32"),
             w1: R.Tensor((10, 128), "float32"),
             b1: R.Tensor((10,), "float32")):
        with R.dataflow():
            lv0 = R.call_dps_packed("linear0", (x, w0, b0), R.Tensor((1, 128), dtype="float32"))
            lv1 = R.call_dps_packed("env.relu", (lv0,), R.Tensor((1, 128), dtype="float32"))
            out = R.call_dps_packed("env.linear", (lv1, w1, b1), R.Tensor((1, 10), dtype="float32"))
            R.output(out)
        return out
'''

# A module exercising the rest of the Relax syntax.
RELAX_FEATURES = '''
@I.ir_module
class Features:
    @T.prim_func
    def add_one(a: T.handle, b: T.handle):
        n = T.int64()
        A = T.match_buffer(a, (n, 4), "float32")
        B = T.match_buffer(b, (n, 4), "float32")
        for i, j in T.grid(n, T.int64(4)):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj] + T.float32(1)

    @R.function
    def helper(x: R.Tensor(("n", 4), "float32")) -> R.Tensor(("n", 4), "float32"):
        n = T.int64()
        y = R.add(x, x)
        return y

    @R.function(pure=False)
    def main(x: R.Tensor(("n", 4), "float32"), c: R.Tensor((), "bool"), s: R.Shape(["n", 4])):
        n = T.int64()
        cls = Features
        R.func_attr({"note": "features", "num": 3})
        t = (x, x)
        a = t[0]
        if c:
            b = cls.helper(a)
            r = R.multiply(b, R.const(2.0, "float32"))
        else:
            r = R.nn.relu(a)
        m = R.match_cast(r, R.Tensor((n, 4), "float32"))
        with R.dataflow():
            o = R.call_tir(cls.add_one, (m,), out_sinfo=R.Tensor((n, 4), "float32"))
            o2 = R.call_tir(cls.add_one, (o,), out_sinfo=R.Tensor((n, 4), "float32"),
                            tir_vars=R.shape([n]))
            R.output(o2)
        p = R.call_packed("env.print", o2, sinfo_args=R.Object)
        q = R.call_pure_packed("env.id", m, sinfo_args=R.Tensor((n, 4), "float32"))
        z = R.permute_dims(q, axes=[1, 0])
        w = R.prim_value(3)
        v = R.shape([n * 2, 4])
        k: R.Tensor(ndim=0) = R.const(1, "int32")
        return (z, w, v, R.str("hi"), R.dtype("float32"), k)
'''

# SPEC §3 "also in script form": T.Buffer params, parallel/vectorized/unroll, intrinsics.
TIR_FEATURES = '''
@T.prim_func
def features(A: T.Buffer((128, 784), "float32"), B: T.Buffer((128,), "int32"),
             C: T.Buffer((128, 784), "float32"), n: T.int32):
    T.func_attr({"tir.noalias": True})
    for i in T.parallel(128):
        for j in T.vectorized(784):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = T.if_then_else(A[vi, vj] > T.float32(0),
                                           T.exp(A[vi, vj]) + T.sqrt(A[vi, vj]),
                                           T.tanh(A[vi, vj]) * T.Cast("float32", B[vi] // 2 % 3))
    for i in T.unroll(4):
        B[i] = T.min(B[i], n) - T.max(B[i + 1], 0)
        if B[i] == 0:
            T.evaluate(T.call_packed("env.check", A, i))
        else:
            C[i, 0] = (T.sigmoid(T.fabs(C[i, 1])) + T.log(T.float32(2))
                       + T.pow(C[i, 2], T.float32(2)) + T.erf(C[i, 3]))
'''


# Lower-level TIR: size vars, strides, offsets, scopes, block match_buffer, let, assert,
# allocate and decl_buffer.
TIR_LOW_LEVEL = '''
@T.prim_func
def low(a: T.handle, b: T.handle, n: T.int32):
    m = T.int32(is_size_var=True)
    A = T.match_buffer(a, (m, 8), "float32", strides=(16, 1), scope="global")
    B = T.match_buffer(b, (m, 8), "float32", elem_offset=4)
    C = T.alloc_buffer((4,), "int8", scope="local")
    for i in range(m):
        with T.block("blk"):
            vi = T.axis.opaque(m, i)
            T.reads(A[vi, 0:8])
            T.writes(B[vi, 0:8])
            sub = T.match_buffer(A[vi, 0:8], (8,), "float32")
            for j in range(8):
                B[vi, j] = sub[j] * T.float32(2)
    t: T.int32 = n * 2
    assert t > 0, "positive"
    ptr = T.allocate([16], "float32")
    D = T.decl_buffer((16,), "float32", data=ptr)
    D[0] = T.float32(1)
    C[0] = T.Cast("int8", t)
'''

# Relax calls through function-valued parameters and multi-output call_tir.
RELAX_CALLS = '''
@I.ir_module
class Calls:
    @T.prim_func
    def split(A: T.Buffer((4,), "float32"), B: T.Buffer((2,), "float32"),
              C: T.Buffer((2,), "float32")):
        for i in range(2):
            B[i] = A[i]
            C[i] = A[i + 2]

    @R.function
    def apply(f: R.Callable((R.Tensor((4,), "float32"),), R.Tensor((4,), "float32")),
              x: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
        y = f(x)
        return y

    @R.function
    def branchy(c: R.Tensor((), "bool"), x: R.Tensor((4,), "float32")):
        if c:
            with R.dataflow():
                a = R.add(x, x)
                b = R.multiply(a, a)
                R.output(b)
            r = b
        else:
            r = x
        return r

    @R.function
    def main(x: R.Tensor((4,), "float32")):
        cls = Calls
        parts = R.call_tir(cls.split, (x,), out_sinfo=[R.Tensor((2,), "float32"),
                                                       R.Tensor((2,), "float32")])
        first = parts[0]
        return (first, parts[1])
'''


# Seed 004 §6.2: TVM's printed form of the BlockBuilder module, verbatim.
SEED_PRINTED_BLOCK_BUILDER = (pathlib.Path(__file__).parent / "golden"
                              / "seed_004_block_builder_tvm.txt").read_text()


def from_text(text):
    """The module or function of a program text."""
    return from_source(text)


def fused_matmul_relu():
    """§6: te.create_prim_func([A, B, D]) with the matmul as a local buffer."""
    A = te.placeholder((128, 128), name="A", dtype="float32")
    B = te.placeholder((128, 128), name="B", dtype="float32")
    k = te.reduce_axis((0, 128), name="k")
    C = te.compute((128, 128), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="matmul")
    D = te.compute(C.shape, lambda i, j: te.max(C[i, j], 0), name="relu")
    return te.create_prim_func([A, B, D])


def te_matmul(A, B):
    k = te.reduce_axis((0, A.shape[1]), name="k")
    return te.compute((A.shape[0], B.shape[1]),
                      lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="matmul")


def te_relu(A):
    return te.compute(A.shape, lambda i, j: te.max(A[i, j], 0), name="relu")


def block_builder_module():
    """SPEC §8 / seed 004 §6.2: BlockBuilder + emit_te."""
    A = relax.Var("A", relax.TensorStructInfo((128, 128), "float32"))
    B = relax.Var("B", relax.TensorStructInfo((128, 128), "float32"))
    bb = relax.BlockBuilder()
    with bb.function("main"):
        with bb.dataflow():
            C = bb.emit_te(te_matmul, A, B)
            D = bb.emit_te(te_relu, C)
            R = bb.emit_output(D)
        bb.emit_func_output(R, params=[A, B])
    return bb.get()


def symbolic_emit_te_module():
    """emit_te over topi with a symbolic batch: match_buffer kernels and call_tir with n."""
    from rvm import topi
    from rvm.tir.expr import Var

    n = Var("n", "int64")
    x = relax.Var("x", relax.TensorStructInfo((n, 784), "float32"))
    w = relax.Var("w", relax.TensorStructInfo((128, 784), "float32"))
    b = relax.Var("b", relax.TensorStructInfo((128,), "float32"))
    bb = relax.BlockBuilder()
    with bb.function("main", [x, w, b]):
        with bb.dataflow():
            y = bb.emit_te(topi.nn.dense, x, w)
            z = bb.emit_te(topi.add, y, b)
            r = bb.emit_te(topi.nn.relu, z)
            s = bb.emit_te(topi.nn.softmax, r)
            out = bb.emit_output(s)
        bb.emit_func_output(out)
    return bb.get()


def high_level_ops_module():
    """Relax operators of the registry (R.matmul, R.nn.softmax, R.reshape...) via BlockBuilder."""
    from rvm.relax import op

    x = relax.Var("x", relax.TensorStructInfo((2, 3), "float32"))
    y = relax.Var("y", relax.TensorStructInfo((3, 4), "float32"))
    bb = relax.BlockBuilder()
    with bb.function("main", [x, y]):
        with bb.dataflow():
            a = bb.emit(op.matmul(x, y))
            b = bb.emit(op.permute_dims(a, [1, 0]))
            c = bb.emit(op.reshape(b, (2, 4, 1)))
            d = bb.emit(op.sum(c, axis=[1], keepdims=True))
            e = bb.emit(op.astype(bb.emit(op.nn.softmax(a, axis=0)), "float16"))
            g = bb.emit(op.exp(bb.emit(op.flatten(bb.emit(op.concat([a, a], axis=0))))))
            k = bb.emit(op.mean(bb.emit(op.add(a, relax.const(1.0)))))
            out = bb.emit_output((d, e, g, k))
        bb.emit_func_output(out)
    return bb.get()


def memory_ops_module():
    """Lowered Relax: allocation, storage, kill and builtin operators (R.memory.*, R.builtin.*)."""
    from rvm.relax.op import memory

    f32 = "float32"
    x = relax.Var("x", relax.TensorStructInfo((2, 3), f32))
    bb = relax.BlockBuilder()
    with bb.function("main", [x], pure=False):
        bb.emit(memory.alloc_tensor(relax.ShapeExpr([2, 3]), f32))
        storage = bb.emit(memory.alloc_storage(relax.ShapeExpr([24])))
        tensor = bb.emit(memory.alloc_tensor_in_storage(storage, 0, relax.ShapeExpr([2, 3]), f32))
        bb.emit(memory.kill_tensor(tensor))
        bb.emit(memory.shape_of(x))
        bb.emit(memory.null_value())
        out = bb.emit(memory.call_builtin_with_ctx(
            "vm.builtin.copy", [x], sinfo_args=relax.TensorStructInfo((2, 3), f32)))
        bb.emit_func_output(out)
    return bb.get()


def bound_params_module():
    """MyModuleMixture with its weights bound as constants (what BindParams("main") makes)."""
    base = from_source(MY_MODULE_MIXTURE_STATIC)
    base.remove("main")
    params = {k: relax.const(v) for k, v in mlp_params().items()}
    bb = relax.BlockBuilder(base)
    x = relax.Var("x", TensorStructInfo((1, 784), "float32"))
    f32 = "float32"
    with bb.function("main", [x]):
        with bb.dataflow():
            lv0 = bb.emit(relax.call_dps_packed("linear0", (x, params["w0"], params["b0"]),
                                                TensorStructInfo((1, 128), f32)), "lv0")
            lv1 = bb.emit(relax.call_dps_packed("env.relu", (lv0,),
                                                TensorStructInfo((1, 128), f32)), "lv1")
            out = bb.emit_output(relax.call_dps_packed(
                "env.linear", (lv1, params["w1"], params["b1"]), TensorStructInfo((1, 10), f32)),
                "out")
        bb.emit_func_output(out)
    return bb.get()


def bind_params_pass_module():
    """Seed 004 §4.7: relax.transform.BindParams("main", nd_params)(MyModuleMixture)."""
    from rvm.runtime.ndarray import array
    from rvm.relax.transform.bind_params import BindParams

    nd_params = {k: array(v) for k, v in mlp_params().items()}
    return BindParams("main", nd_params)(from_source(MY_MODULE_MIXTURE_STATIC))


def relu0_by_constructors():
    """SPEC §3's relu0 built from TIR constructors."""
    n = _e.Var("n", "int64")
    x, y = _e.Var("x", "handle"), _e.Var("y", "handle")
    X = decl_buffer((1, n), "float32", "X")
    Y = decl_buffer((1, n), "float32", "Y")
    i, j = _e.Var("i", "int32"), _e.Var("j", "int64")
    vi, vj = _e.Var("vi", "int32"), _e.Var("vj", "int64")
    ivs = [_e.IterVar(_e.Range.from_min_extent(_e.IntImm("int32", 0), _e.IntImm("int32", 1)),
                      vi, _e.IterVar.DataPar),
           _e.IterVar(_e.Range.from_min_extent(_e.IntImm("int64", 0), n), vj, _e.IterVar.DataPar)]
    store = _s.BufferStore(Y, _e.Max(X[vi, vj], _e.FloatImm("float32", 0.0)), [vi, vj])
    block = _s.Block(ivs, [X[vi, vj]], [Y[vi, vj]], "Y", store)
    loops = _s.For(i, 0, 1, "serial", _s.For(j, 0, n, "serial",
                                               _s.BlockRealize([i, j], True, block)))
    root = _s.BlockRealize([], True, _s.Block([], [], [], "root", loops))
    return PrimFunc([x, y], root, buffer_map={x: X, y: Y}, attrs={"global_symbol": "relu0"})


def let_expression_func():
    """A PrimFunc with a Let expression (``T.Let(x + x, where={x: i * 2})``)."""
    A = decl_buffer((4,), "int32", "A")
    i, x = _e.Var("i", "int32"), _e.Var("x", "int32")
    body = _s.For(i, 0, 4, "serial", _s.BufferStore(A, _e.Let(x, i * 2, x + x), [i]))
    return PrimFunc([A], body, attrs={"global_symbol": "let_expr"})


def spec3_module_by_builders():
    """SPEC §3's MyModule from TIR constructors (relu0), the parser (linear0) and
    BlockBuilder (main)."""
    base = from_source("@I.ir_module\nclass M:" + LINEAR0)
    bb = relax.BlockBuilder(base)
    bb.add_func(relu0_by_constructors(), "relu0")
    from rvm.tir.expr import Var

    m, n, k = Var("m", "int64"), Var("n", "int64"), Var("k", "int64")
    f32 = "float32"
    x = relax.Var("x", TensorStructInfo((1, m), f32))
    w0 = relax.Var("w0", TensorStructInfo((n, m), f32))
    b0 = relax.Var("b0", TensorStructInfo((n,), f32))
    w1 = relax.Var("w1", TensorStructInfo((k, n), f32))
    b1 = relax.Var("b1", TensorStructInfo((k,), f32))
    with bb.function("main", [x, w0, b0, w1, b1]):
        with bb.dataflow():
            lv0 = bb.emit(relax.call_dps_packed("linear0", (x, w0, b0),
                                                TensorStructInfo((1, n), f32)), "lv0")
            lv1 = bb.emit(relax.call_dps_packed("relu0", (lv0,), TensorStructInfo((1, n), f32)),
                          "lv1")
            out = bb.emit_output(relax.call_dps_packed("linear0", (lv1, w1, b1),
                                                       TensorStructInfo((1, k), f32)), "out")
        bb.emit_func_output(out)
    return bb.get()


def constant_module():
    """A function mixing inline scalar constants and metadata constants."""
    x = relax.Var("x", TensorStructInfo((2, 3), "float32"))
    bb = relax.BlockBuilder()
    with bb.function("main", [x]):
        c = relax.const(np.arange(6, dtype="float32").reshape(2, 3))
        out = bb.emit(relax.call_pure_packed("env.add", x, c, relax.const(0.5),
                                             relax.const(np.array([1, 2], "int64")),
                                             sinfo_args=TensorStructInfo((2, 3), "float32")))
        bb.emit_func_output(out)
    return bb.get()


SOURCES = {
    "spec3_my_module": MY_MODULE,
    "seed_with_extern_call": MY_MODULE_WITH_EXTERN_CALL,
    "seed_mixture": MY_MODULE_MIXTURE,
    "seed_mixture_static": MY_MODULE_MIXTURE_STATIC,
    "relax_features": RELAX_FEATURES,
    "tir_features": TIR_FEATURES,
    "tir_low_level": TIR_LOW_LEVEL,
    "relax_calls": RELAX_CALLS,
    "seed_printed_block_builder": SEED_PRINTED_BLOCK_BUILDER,
}

BUILDERS = {
    "te_fused_matmul_relu": fused_matmul_relu,
    "block_builder_emit_te": block_builder_module,
    "symbolic_emit_te": symbolic_emit_te_module,
    "high_level_ops": high_level_ops_module,
    "memory_ops": memory_ops_module,
    "bound_params": bound_params_module,
    "bind_params_pass": bind_params_pass_module,
    "spec3_by_builders": spec3_module_by_builders,
    "relu0_by_constructors": relu0_by_constructors,
    "let_expression": let_expression_func,
    "constants": constant_module,
}


def all_modules():
    """(name, zero-argument maker) of every module of the suite."""
    out = [(name, (lambda text=text: from_source(text))) for name, text in SOURCES.items()]
    return out + list(BUILDERS.items())

