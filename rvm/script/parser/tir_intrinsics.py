"""TVM's TIR builtins beyond arithmetic: the ``T.tvm_*`` family and the GPU/tensor-core
intrinsics, for parsing and printing (and ``T.meta_var``).

Each builds the ``tir.Call`` TVM builds (``T.tvm_fill_fragment(C, 16, 16, 16,
0, T.float32(0))`` is a call of ``tir.tvm_fill_fragment`` returning a
handle), the printer writes it back under its ``T.`` name, and a CPU code
generator refuses it naming the intrinsic. ``SIGNATURES`` maps each name to
(number of arguments or None for any, result dtype), where the result dtype
is a dtype, ``"arg<k>"`` (the dtype of argument k), ``"first"`` (a dtype
string passed first, TVM's dtype-forwarding intrinsics) or ``"last"``.

>>> from rvm.tir import Var
>>> frag = Var("C", "handle")
>>> call = tvm_fill_fragment(frag, 16, 16, 16, 0, 0.0)
>>> call.op, str(call.dtype)
('tir.tvm_fill_fragment', 'handle')
"""
from rvm.tir import expr as _e
from rvm.tir import op as _op

SIGNATURES = {
    "tvm_stack_alloca": (2, "handle"),
    "tvm_stack_make_shape": (None, "handle"),
    "tvm_stack_make_array": (6, "handle"),
    "tvm_tuple": (None, "handle"),
    "tvm_struct_get": (4, "last"),
    "tvm_struct_set": (4, "int32"),
    "tvm_thread_invariant": (1, "arg0"),
    "tvm_thread_allreduce": (None, "handle"),
    "tvm_load_matrix_sync": (8, "handle"),
    "tvm_store_matrix_sync": (8, "handle"),
    "tvm_mma_sync": (8, "handle"),
    "tvm_bmma_sync": (8, "handle"),
    "tvm_fill_fragment": (6, "handle"),
    "tvm_access_ptr": (5, "handle"),
    "tvm_throw_last_error": (0, "handle"),
    "tvm_check_return": (3, "int32"),
    "tvm_storage_sync": (1, "int32"),
    "tvm_warp_shuffle": (5, "arg1"),
    "tvm_warp_shuffle_up": (5, "arg1"),
    "tvm_warp_shuffle_down": (5, "arg1"),
    "tvm_warp_activemask": (0, "uint32"),
    "ptx_mma": (None, "first"),
    "ptx_mma_sp": (None, "first"),
    "ptx_ldmatrix": (8, "first"),
    "ptx_cp_async": (6, "first"),
    "ptx_commit_group": (0, "handle"),
    "ptx_wait_group": (1, "handle"),
    "mma_store": (7, "first"),
    "mma_fill": (4, "first"),
}


def _convert(value):
    if isinstance(value, (_e.PrimExpr, _e.IterVar)) or hasattr(value, "_fields"):
        return value.var if isinstance(value, _e.IterVar) else value
    return _op.convert(value)


def make_call(name, args):
    """The ``tir.Call`` of intrinsic ``name`` on ``args`` (ValueError on a wrong count)."""
    arity, ret = SIGNATURES[name]
    args = list(args)
    if ret == "first":
        if not args or not isinstance(args[0], str):
            raise ValueError(f"T.{name} expects the result dtype (a str) first, got "
                             f"{args[0]!r}" if args else f"T.{name} expects the result dtype "
                             "(a str) first, got no arguments")
        dtype, args = args[0], args[1:]
    elif ret == "last":
        if not args or not isinstance(args[-1], str):
            raise ValueError(f"T.{name} expects the result dtype (a str) last")
        dtype, args = args[-1], args[:-1]
    if arity is not None:
        given = len(args) + (1 if ret == "last" else 0)
        if ret == "first":
            given += 1
        if given != arity:
            raise ValueError(f"T.{name} expects {arity} argument(s), got {given}")
    args = [_convert(a) for a in args]
    if ret.startswith("arg"):
        dtype = args[int(ret[3:])].dtype
    elif ret not in ("first", "last"):
        dtype = ret
    return _e.Call(dtype, f"tir.{name}", args)


def printed_args(call):
    """The arguments TVM's printer writes for ``call`` (a Call of one of SIGNATURES), as a
    list whose str entries are dtypes; None when ``make_call`` would not rebuild it."""
    name = call.op[4:] if call.op.startswith("tir.") else None
    if name not in SIGNATURES:
        return None
    _, ret = SIGNATURES[name]
    args = list(call.args)
    if ret == "first":
        args = [str(call.dtype)] + args
    elif ret == "last":
        args = args + [str(call.dtype)]
    try:
        rebuilt = make_call(name, args)
    except (ValueError, TypeError, IndexError):
        return None
    return args if rebuilt.dtype == call.dtype else None


def _python_function(name):
    def build(*args):
        return make_call(name, args)

    build.__name__ = name
    build.__doc__ = f"``T.{name}(...)``: a call of the TIR intrinsic ``tir.{name}``."
    return build


FUNCTIONS = {name: _python_function(name) for name in SIGNATURES}
globals().update(FUNCTIONS)


class meta_var:  # noqa: N801  (TVM's name)
    """``T.meta_var(value)``: a Python value used as is inside a TensorIR script (``a =
    T.meta_var(x + 1)`` makes ``a`` stand for the expression, without a LetStmt)."""

    def __init__(self, value):
        self.value = value

    def __iter__(self):
        return iter(meta_var(v) for v in self.value)

    def __getitem__(self, index):
        return meta_var(self.value[index])

    def __repr__(self):
        return f"T.meta_var({self.value!r})"
