"""Lowered Relax in script form: the Expected side of pass tests written as scripts.

The pass tests in tests/relax/transform build these with constructors; here the
same Before/Expected pairs are scripts, to show that every lowered form
(direct kernel calls, R.builtin/R.memory/R.vm allocation, kills, builtin
calls with the VM context, R.ExternFunc calls, shape heaps, dataflow blocks
inside branches) parses.
"""
import pytest

from rvm.ir.expr import GlobalVar
from rvm.ir.module import IRModule
from rvm.ir.base import assert_structural_equal, structural_equal
from rvm.relax.expr import ExternFunc
from rvm.relax.struct_info import TupleStructInfo
from rvm.script import ParseError, from_source
from rvm.script import ir as I
from rvm.script import relax as R
from rvm.script import tir as T
from rvm.relax.transform.call_tir_rewrite import CallTIRRewrite
from rvm.relax.transform.kill_after_last_use import KillAfterLastUse
from rvm.ir.transform import Sequential
from rvm.relax.transform.static_plan_block_memory import StaticPlanBlockMemory
from rvm.relax.transform.to_non_dataflow import ToNonDataflow
from rvm.relax.transform.vm_builtin_lower import VMBuiltinLower
from rvm.relax.transform.vm_shape_lower import VMShapeLower

from tests.relax.transform.test_call_tir_rewrite import TIRModule


def test_call_tir_rewrite_expected_in_script_form():
    @I.ir_module(check_well_formed=False)  # a lowered form
    class Expected:
        @T.prim_func
        def relu(x: T.Buffer((2, 4), "float32"), y: T.Buffer((2, 4), "float32")):
            for i, j in T.grid(2, 4):
                with T.block("y"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    y[vi, vj] = T.max(x[vi, vj], T.float32(0))

        @R.function
        def main(x: R.Tensor((2, 4), "float32")):
            cls = Expected
            alloc = R.builtin.alloc_tensor(R.shape([2, 4]), R.dtype("float32"), R.prim_value(0))
            _ = cls.relu(x, alloc)
            y = alloc
            alloc1 = R.builtin.alloc_tensor(R.shape([2, 4]), R.dtype("float32"), R.prim_value(0))
            _1 = cls.relu(y, alloc1)
            z = alloc1
            return z

    after = Sequential([ToNonDataflow(), CallTIRRewrite()])(TIRModule)
    assert_structural_equal(after, Expected)
    call = Expected["main"].body.blocks[0].bindings[1].value
    assert isinstance(call.op, GlobalVar)
    assert structural_equal(call.struct_info_, TupleStructInfo([]))  # a kernel returns nothing


@I.ir_module(check_well_formed=False)  # a lowered form: impure allocations
class Chain:
    @T.prim_func
    def k(x: T.Buffer((2, 4), "float32"), y: T.Buffer((2, 4), "float32")):
        for i, j in T.grid(2, 4):
            y[i, j] = x[i, j]

    @R.function
    def main(x: R.Tensor((2, 4), "float32")):
        cls = Chain
        a0 = R.builtin.alloc_tensor(R.shape([2, 4]), R.dtype("float32"), R.prim_value(0))
        _ = cls.k(x, a0)
        a1 = R.builtin.alloc_tensor(R.shape([2, 4]), R.dtype("float32"), R.prim_value(0))
        _1 = cls.k(a0, a1)
        a2 = R.builtin.alloc_tensor(R.shape([2, 4]), R.dtype("float32"), R.prim_value(0))
        _2 = cls.k(a1, a2)
        return a2


def _with_chain_kernel(relax_text):
    """The module of Chain's kernel and the Relax function ``relax_text``."""
    return from_source('''
@I.ir_module
class Expected:
    @T.prim_func
    def k(x: T.Buffer((2, 4), "float32"), y: T.Buffer((2, 4), "float32")):
        for i, j in T.grid(2, 4):
            y[i, j] = x[i, j]
''' + relax_text)


def test_static_plan_block_memory_expected_in_script_form():
    expected = _with_chain_kernel('''
    @R.function
    def main(x: R.Tensor((2, 4), "float32")):
        cls = Expected
        storage = R.memory.alloc_storage(R.shape([32]), R.prim_value(0), R.str("global"),
                                         R.dtype("float32"))
        a0 = R.memory.alloc_tensor(storage, R.prim_value(0), R.shape([2, 4]), R.dtype("float32"))
        _ = cls.k(x, a0)
        storage1 = R.memory.alloc_storage(R.shape([32]), R.prim_value(0), R.str("global"),
                                          R.dtype("float32"))
        a1 = R.memory.alloc_tensor(storage1, R.prim_value(0), R.shape([2, 4]),
                                   R.dtype("float32"))
        _1 = cls.k(a0, a1)
        _2 = R.memory.kill_tensor(a0)
        a2 = R.builtin.alloc_tensor(R.shape([2, 4]), R.dtype("float32"), R.prim_value(0))
        _3 = cls.k(a1, a2)
        _4 = R.memory.kill_tensor(a1)
        _5 = R.memory.kill_storage(storage)
        _6 = R.memory.kill_storage(storage1)
        return a2
''')
    assert_structural_equal(StaticPlanBlockMemory()(Chain), expected)


def test_vm_builtin_lower_and_kill_after_last_use_expected_in_script_form():
    expected = _with_chain_kernel('''
    @R.function
    def main(x: R.Tensor((2, 4), "float32")):
        cls = Expected
        s0 = R.vm.alloc_storage(R.shape([32]), R.prim_value(0), R.dtype("uint8"), R.str("global"))
        a0 = R.vm.alloc_tensor(s0, R.prim_value(0), R.shape([2, 4]), R.dtype("float32"))
        _ = R.vm.kill_object(s0)
        _1 = cls.k(x, a0)
        s1 = R.vm.alloc_storage(R.shape([32]), R.prim_value(0), R.dtype("uint8"), R.str("global"))
        a1 = R.vm.alloc_tensor(s1, R.prim_value(0), R.shape([2, 4]), R.dtype("float32"))
        _2 = R.vm.kill_object(s1)
        _3 = cls.k(a0, a1)
        _4 = R.vm.kill_object(a0)
        s2 = R.vm.alloc_storage(R.shape([32]), R.prim_value(0), R.dtype("uint8"), R.str("global"))
        a2 = R.vm.alloc_tensor(s2, R.prim_value(0), R.shape([2, 4]), R.dtype("float32"))
        _5 = R.vm.kill_object(s2)
        _6 = cls.k(a1, a2)
        _7 = R.vm.kill_object(a1)
        return a2
''')
    assert_structural_equal(Sequential([VMBuiltinLower(), KillAfterLastUse()])(Chain), expected)


def test_vm_shape_lower_expected_in_script_form():
    @I.ir_module
    class Before:
        @R.function
        def main(x: R.Tensor(("n", 4), "float32")):
            n = T.int64()
            s = R.shape([n, n * 2])
            return s

    @I.ir_module(check_well_formed=False)  # a lowered form
    class Expected:
        @T.prim_func
        def shape_func_main(H: T.Buffer((2,), "int64")):
            T.func_attr({"tir.noalias": True})
            H[T.int64(1)] = H[T.int64(0)] * T.int64(2)

        @R.function
        def main(x: R.Tensor(("n", 4), "float32")):
            n = T.int64()
            cls = Expected
            heap = R.call_builtin_with_ctx(R.ExternFunc("vm.builtin.alloc_shape_heap"),
                                           (R.prim_value(2),),
                                           sinfo_args=R.Tensor(ndim=1, dtype="int64"))
            _ = R.ExternFunc("vm.builtin.check_tensor_info")(
                x, R.prim_value(2), R.dtype("float32"),
                R.str("main: parameter 'x' expects float32[n, 4]"))
            _1 = R.call_packed("vm.builtin.match_shape", x, heap, R.prim_value(2),
                               R.prim_value(1), R.prim_value(0), R.prim_value(0),
                               R.prim_value(4), R.str("main: parameter 'x' expects float32[n, 4]"))
            _2 = cls.shape_func_main(heap)
            shape: R.Shape(ndim=2) = R.call_packed("vm.builtin.make_shape", heap, R.prim_value(2),
                                                   R.prim_value(1), R.prim_value(0),
                                                   R.prim_value(1), R.prim_value(1))
            s: R.Shape([n, n * 2]) = shape
            return s

    assert_structural_equal(VMShapeLower()(Before), Expected)


def test_dataflow_block_inside_a_branch_and_to_non_dataflow():
    @I.ir_module
    class Before:
        @R.function
        def main(c: R.Tensor((), "bool"), x: R.Tensor((2,), "float32")):
            if c:
                with R.dataflow():
                    a = R.add(x, x)
                    b = R.multiply(a, a)
                    R.output(b)
                r = b
            else:
                r = x
            return r

    @I.ir_module
    class Expected:
        @R.function
        def main(c: R.Tensor((), "bool"), x: R.Tensor((2,), "float32")):
            if c:
                a = R.add(x, x)
                b = R.multiply(a, a)
                r = b
            else:
                r = x
            return r

    branch = Before["main"].body.blocks[0].bindings[0].value.true_branch
    assert [type(block).__name__ for block in branch.blocks] == ["DataflowBlock"]
    assert_structural_equal(ToNonDataflow()(Before), Expected)


def test_extern_func_call_is_the_call_packed_form():
    text = '''
@R.function(pure=False)
def main(x: R.Tensor((2,), "float32")):
    y = R.ExternFunc("env.f")(x, R.prim_value(1), sinfo_args=R.Tensor((2,), "float32"))
    z = R.call_packed("env.f", x, R.prim_value(1), sinfo_args=R.Tensor((2,), "float32"))
    return (y, z)
'''
    main = from_source(text)
    first, second = (b.value for b in main.body.blocks[0].bindings)
    assert isinstance(first.op, ExternFunc) and first.op.global_symbol == "env.f"
    assert_structural_equal(first, second, map_free_vars=True)


@pytest.mark.parametrize("line, message", [
    ('y = R.ExternFunc("env.f")(x, purity=False)', "takes sinfo_args= only"),
    ("y = I.GlobalVar(3)(x)", "I.GlobalVar expects a function name string"),
])
def test_malformed_lowered_calls(line, message):
    text = f'''
@R.function(pure=False)
def main(x: R.Tensor((2,), "float32")):
    {line}
    return y
'''
    with pytest.raises(ParseError, match=message) as err:
        from_source(text)
    assert err.value.line == 4


def test_a_callee_outside_the_module_prints_as_a_global_var():
    only_main = IRModule({"main": Chain["main"]})  # the kernel k left out
    text = only_main.script()
    # a call of a function the module lacks keeps its variable: the parser could not infer it
    assert ': R.Tuple = I.GlobalVar("k")(x, a0)' in text and "cls" not in text
    assert_structural_equal(from_source(text), only_main)
