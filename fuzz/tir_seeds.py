"""Seed executables of the TIR campaign: small valid models whose kernels cover matmul,
conv2d, fused elementwise chains, reductions, softmax, integer casts, symbolic shapes,
local and global allocations, and parallel, vectorized and unrolled loops.

``tir_seeds()`` gives ``[(name, executable bytes, inputs)]``; each seed's ``main`` runs on
its inputs. Shapes are small: every mutant that reaches the compiler compiles its seed's
whole translation unit, and an unrolled loop's body is compiled once per iteration (the
unrolled seed's inner loops have 16). Loop kinds are set on the saved TIR (each changed
loop is one whose iterations are independent), so the seeds stay valid files.
"""
import numpy as np

from rvm import relax
from rvm.script import ir as I, relax as R
from rvm.tir.stmt import ForKind
from rvm.tir.stmt_functor import StmtMutator, post_order_visit
from tests.security.attack import kernel_tir, with_kernels


@I.ir_module
class MatmulSymbolic:
    @R.function
    def main(x: R.Tensor(("n", 16), "float32"), w: R.Tensor((16, 8), "float32")):
        with R.dataflow():
            y = R.nn.relu(R.add(R.matmul(x, w), R.const(1.0, "float32")))
            R.output(y)
        return y


@I.ir_module
class Conv:
    @R.function
    def main(img: R.Tensor((1, 2, 14, 14), "float32"), k: R.Tensor((3, 2, 3, 3), "float32")):
        with R.dataflow():
            c = R.nn.conv2d(img, k, padding=[1, 1, 1, 1])
            R.output(c)
        return c


@I.ir_module
class Reductions:
    @R.function
    def main(x: R.Tensor(("n", 16), "float32")):
        with R.dataflow():
            s = R.sum(x, axis=[1])
            m = R.nn.softmax(x, axis=-1)
            R.output(s, m)
        return (s, m)


@I.ir_module
class Elementwise:
    @R.function
    def main(x: R.Tensor((4, 16), "float32"), y: R.Tensor((4, 16), "float32")):
        with R.dataflow():
            z = R.multiply(R.exp(R.subtract(x, y)), R.const(0.5, "float32"))
            q = R.astype(R.add(z, x), "int8")
            R.output(q)
        return q


class _LoopKinds(StmtMutator):
    """Outer loops of a nest become ``outer``, innermost serial loops ``inner``."""

    def __init__(self, outer, inner):
        self.outer, self.inner, self.depth = outer, inner, 0

    def visit_for_(self, op):
        self.depth += 1
        new = self._generic(op)
        self.depth -= 1
        innermost = not _has_loop(op.body)
        if op.annotations or new.kind != ForKind.SERIAL:
            return new
        if innermost and self.inner is not None and _writes_along(op):
            return new.with_fields(kind=self.inner)
        if self.depth == 0 and not innermost and self.outer is not None:
            return new.with_fields(kind=self.outer)
        return new


def _writes_along(loop):
    """Whether ``loop``'s body is one store indexed by the loop variable (no reduction)."""
    body = loop.body
    if type(body).__name__ != "BufferStore":
        return False
    used = []
    for index in body.indices:
        post_order_visit(index, lambda n: used.append(n) if n is loop.loop_var else None)
    return bool(used)


def _has_loop(stmt):
    found = []
    post_order_visit(stmt, lambda n: found.append(n) if type(n).__name__ == "For" else None)
    return bool(found)


def _with_loop_kinds(data, names, outer, inner):
    funcs = [(n, f.with_body(_LoopKinds(outer, inner).visit(f.body)) if n in names else f)
             for n, f in kernel_tir(data)]
    return with_kernels(data, funcs=funcs)


def tir_seeds():
    """[(name, executable bytes, inputs)] of the seed models."""
    rng = np.random.default_rng(0)

    def f32(*shape):
        return rng.standard_normal(shape).astype("float32")
    matmul = relax.build(MatmulSymbolic, target="c").save_to_bytes()
    elementwise = relax.build(Elementwise, target="c").save_to_bytes()
    elementwise_funcs = [n for n, _ in kernel_tir(elementwise)]
    x4 = (f32(4, 16), f32(4, 16))
    return [
        ("matmul_symbolic", matmul, (f32(3, 16), f32(16, 8))),
        ("matmul_parallel_vectorized",
         _with_loop_kinds(matmul, {"fused_matmul_add_relu"}, ForKind.PARALLEL,
                          ForKind.VECTORIZED), (f32(5, 16), f32(16, 8))),
        ("conv2d", relax.build(Conv, target="c").save_to_bytes(), (f32(1, 2, 14, 14),
                                                                    f32(3, 2, 3, 3))),
        ("reductions_softmax", relax.build(Reductions, target="c").save_to_bytes(),
         (f32(3, 16),)),
        ("elementwise_fused", elementwise, x4),
        ("elementwise_unrolled",
         _with_loop_kinds(elementwise, set(elementwise_funcs), ForKind.PARALLEL,
                          ForKind.UNROLLED), x4),
    ]
