"""Constructors for the Expected side of lowering tests.

(tests/script/test_lowered_forms.py states the same lowered forms in script form.)

``FunctionBuilder`` collects bindings of a function's single block, naming
values like the passes do, so expected modules read close to their printed form.
"""
from rvm.ir.expr import GlobalVar
from rvm.relax.binding import BindingBlock, DataflowBlock, SeqExpr, VarBinding
from rvm.relax.expr import Call, DataTypeImm, ExternFunc, PrimValue, ShapeExpr, StringImm, Var
from rvm.relax.function import Function
from rvm.relax.op.registry import Op
from rvm.relax.struct_info import ObjectStructInfo, TupleStructInfo
from rvm.relax.transform.lowering_util import normalized


def op(name, *args, sinfo_args=()):
    """A call of the operator ``name``."""
    return Call(Op.get(name), list(args), sinfo_args=sinfo_args)


def extern(name, *args, sinfo=None):
    """A call of the packed function ``name`` (struct info ``sinfo``, default Object)."""
    call = Call(ExternFunc(name), list(args))
    object.__setattr__(call, "struct_info_", sinfo or ObjectStructInfo())
    return call


def kernel(name, *args):
    """A destination-passing call of the PrimFunc ``name`` (void result)."""
    call = Call(GlobalVar(name), list(args))
    object.__setattr__(call, "struct_info_", TupleStructInfo([]))
    return call


def prims(*values):
    """PrimValues of ``values``."""
    return [PrimValue(v) for v in values]


class FunctionBuilder:
    """Bindings of one block, then ``finish(result)`` makes the Function."""

    def __init__(self, params, dataflow=False):
        self.params = list(params)
        self.bindings = []
        self.dataflow = dataflow

    def let(self, value, name="v", sinfo=None, var=None):
        """Binds ``value`` and returns the new variable."""
        value = value if value.struct_info_ is not None else normalized(value)
        if var is None:
            var = Var(name, sinfo or value.struct_info_)
        self.bindings.append(VarBinding(var, value))
        return var

    def alloc_tensor(self, shape, dtype):
        """``R.builtin.alloc_tensor(R.shape(shape), dtype, 0)``."""
        return self.let(op("relax.builtin.alloc_tensor", ShapeExpr(shape), DataTypeImm(dtype),
                           PrimValue(0)), "alloc")

    def finish(self, result, attrs=None, ret_struct_info=None, is_pure=True):
        """The Function with the collected bindings and ``result``."""
        block_type = DataflowBlock if self.dataflow else BindingBlock
        blocks = [block_type(self.bindings)] if self.bindings else []
        return Function(self.params, SeqExpr(blocks, result), ret_struct_info, is_pure, attrs)


def vm_alloc_storage(size, dtype="uint8"):
    """``R.vm.alloc_storage(size, 0, dtype, "global")``."""
    return op("relax.vm.alloc_storage", size if not isinstance(size, list) else ShapeExpr(size),
              PrimValue(0), DataTypeImm(dtype), StringImm("global"))
