"""Malformed programs of the script forms TVM users write, which TVM rejects too: each fails
at parse time with a DiagnosticError pointing at its line and saying what was expected."""
import pytest

from rvm.error import DiagnosticError
from rvm.script import from_source

INPLACE_KERNEL = '''
    @T.prim_func
    def add_inplace(A: T.Buffer((2, 3), "float32"), B: T.Buffer((2, 3), "float32")):
        for i, j in T.grid(2, 3):
            with T.block("T_add"):
                vi, vj = T.axis.remap("SS", [i, j])
                A[vi, vj] = A[vi, vj] + B[vi, vj]
'''


def _module(body, kernels=INPLACE_KERNEL, pure=True):
    decorator = "@R.function" if pure else "@R.function(pure=False)"
    return f'''
@I.ir_module
class Module:{kernels}
    {decorator}
    def main(x: R.Tensor((2, 3), "float32"), y: R.Tensor((2, 3), "float32"),
             c: R.Tensor((), "bool"), i: R.Tensor((), "int32")):
        cls = Module
{body}
        return x
'''


CASES = {
    "inplace index out of range": (
        "        r = R.call_tir_inplace(cls.add_inplace, (x, y), inplace_indices=[2], "
        "out_sinfo=R.Tensor((2, 3), \"float32\"))",
        "inplace index 2 is out of range for 2 argument"),
    "inplace output differs from its argument": (
        "        r = R.call_tir_inplace(cls.add_inplace, (x, y), inplace_indices=[0], "
        "out_sinfo=R.Tensor((3, 2), \"float32\"))",
        "must have that argument's struct info"),
    "inplace index used twice": (
        "        r = R.call_tir_inplace(cls.add_inplace, (x, y), inplace_indices=[0, 0], "
        "out_sinfo=[R.Tensor((2, 3), \"float32\"), R.Tensor((2, 3), \"float32\")])",
        "each inplace index must be distinct"),
    "inplace indices missing": (
        "        r = R.call_tir_inplace(cls.add_inplace, (x, y), "
        "out_sinfo=R.Tensor((2, 3), \"float32\"))",
        "needs inplace_indices"),
    "assert on a non-bool condition": (
        "        R.assert_op(i, format=\"bad\")",
        "the condition must be a bool scalar"),
    "invoke_closure without sinfo_args": (
        "        clo = R.make_closure(cls.helper, (x,))\n"
        "        r = R.invoke_closure(clo, (y,))",
        "invoke_closure"),
    "make_closure of a tensor": (
        "        clo = R.make_closure(x, (y,))",
        "make_closure: the function must be a GlobalVar"),
    "print with a non-string format": (
        "        R.print(x, format=1)",
        "format must be a str"),
    "alloc_tensor on a named device": (
        "        a = R.builtin.alloc_tensor(R.shape([2]), dtype=\"float32\", "
        "runtime_device_index=\"gpu\")",
        "runtime_device_index must be an int"),
    "operands of different dtypes": (
        "        z = R.add(x, i)",
        "operand dtypes differ"),
    "emit_te of something not callable": (
        "        z = R.emit_te(1, x)",
        "R.emit_te expects a TE function"),
    "dataflow var used after its block": (
        "        with R.dataflow():\n"
        "            lv = R.add(x, y)\n"
        "            gv = R.add(lv, y)\n"
        "            R.output(gv)\n"
        "        z = R.add(lv, gv)",
        "cannot be used after it"),
}

HELPER = INPLACE_KERNEL + '''
    @R.function
    def helper(a: R.Tensor((2, 3), "float32"), b: R.Tensor((2, 3), "float32")):
        return R.add(a, b)
'''


@pytest.mark.parametrize("name", sorted(CASES))
def test_malformed_program_is_rejected_at_its_line(name):
    body, message = CASES[name]
    text = _module(body, HELPER, pure=False)
    with pytest.raises(DiagnosticError, match=message) as info:
        from_source(text)
    reported = str(info.value)
    first_body_line = text.splitlines().index(body.splitlines()[0]) + 1
    lines = range(first_body_line, first_body_line + len(body.splitlines()))
    assert any(f"<string>:{n}:" in reported for n in lines), reported
