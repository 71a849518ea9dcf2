"""VM codegen: lowered Relax functions -> bytecode through an ExecBuilder.

The input is the form the default pipeline produces (see ``rvm.driver.relax_build``):
every function body is a SeqExpr of bindings whose values are calls of
extern functions, kernels, other Relax functions, closures, a few VM
operators (``relax.vm.alloc_storage``, ``relax.vm.alloc_tensor``,
``relax.vm.kill_object``, ``relax.null_value``, ``relax.call_builtin_with_ctx``),
tuples, leaves, or an ``If`` whose branches have the same form.

Each binding gets one register, except that leaves are not copied:
constants, immediates, strings, dtypes and constant shapes become direct
arguments (pooled once), and a variable bound to another variable shares its
argument. A result that nothing reads goes to no register at all. An ``If``
becomes two jumps, backpatched, with both branches copying their result
into one merge register.

>>> from rvm.bytecode.builder import ExecBuilder
>>> from rvm.ir.module import IRModule
>>> from rvm.relax.binding import SeqExpr
>>> from rvm.relax.expr import Var
>>> from rvm.relax.function import Function
>>> from rvm.relax.struct_info import TensorStructInfo
>>> x = Var("x", TensorStructInfo((2,), "float32"))
>>> ib = vm_codegen(IRModule({"ident": Function([x], SeqExpr([], x))}))
>>> print(ib.get().as_text().splitlines()[1].strip())
0: ret   %0  ; ident:return
"""
from rvm.bytecode.builder import ExecBuilder
from rvm.bytecode.contract import ArgKind
from rvm.codegen.vm.args import ArgConverter, alias_names
from rvm.ir.expr import GlobalVar
from rvm.relax.analysis.var_analysis import used_vars
from rvm.relax.binding import BindingBlock, MatchCast, SeqExpr, VarBinding
from rvm.relax.expr import (
    Call, Constant, DataTypeImm, ExternFunc, If, PrimValue, ShapeExpr, StringImm, Tuple,
    TupleGetItem, Var,
)
from rvm.relax.function import Function
from rvm.relax.op.registry import Op
from rvm.relax.struct_info import PrimStructInfo
from rvm.support.errors import RVMError
from rvm.tir.function import PrimFunc

__all__ = ["CodegenError", "function_symbol", "vm_codegen"]

_LEAVES = (Var, Constant, PrimValue, StringImm, DataTypeImm, ShapeExpr, GlobalVar, ExternFunc)


class CodegenError(RVMError, ValueError):
    """The Relax program is not in the lowered form the VM codegen accepts."""


def function_symbol(gv, func):
    """The name a function gets in the executable: a Relax function's ``global_symbol``
    (else its GlobalVar's name); a kernel is always named after its GlobalVar."""
    if isinstance(func, Function):
        symbol = func.get_attr("global_symbol")
        if isinstance(symbol, str) and symbol:
            return symbol
    return gv.name_hint


def vm_codegen(mod, ib=None):
    """Emits every Relax function of ``mod`` into ``ib`` (a new ExecBuilder if None).

    PrimFuncs are declared as kernels (to be provided by a kernel library
    attached to the builder); Relax functions become VM functions named by
    ``function_symbol``. Returns the builder.
    """
    ib = ExecBuilder() if ib is None else ib
    symbols = {}
    for gv, func in mod.functions.items():
        if isinstance(func, Function):
            symbols[gv.name_hint] = function_symbol(gv, func)
            ib.declare_function(symbols[gv.name_hint], "vm")
        elif isinstance(func, PrimFunc):
            symbols[gv.name_hint] = gv.name_hint
            ib.declare_function(gv.name_hint, "kernel")
    for gv, func in mod.functions.items():
        if isinstance(func, Function):
            _FunctionCodegen(ib, mod, symbols, gv, func).run()
    return ib


def _is_kill(value):
    return (isinstance(value, Call) and isinstance(value.op, Op)
            and value.op.name == "relax.vm.kill_object")


def _trailing_kills(body):
    """The ids of the kill_object bindings that end a function body: nothing needs them, as
    RET drops the whole frame."""
    found = set()
    if not isinstance(body, SeqExpr):
        return found
    for block in reversed(body.blocks):
        for binding in reversed(block.bindings):
            if not (isinstance(binding, VarBinding) and _is_kill(binding.value)):
                return found
            found.add(id(binding))
    return found


class _FunctionCodegen:
    """Emits one Relax function."""

    def __init__(self, ib, mod, symbols, gv, func):
        self.ib = ib
        self.mod = mod
        self.symbols = symbols
        self.name = symbols[gv.name_hint]
        self.func = func
        self.args = ArgConverter(ib, self._callee_arg, self._new_reg, self.name)
        self.used = set(used_vars(func.body))
        self.num_regs = 0
        self.binding = "return"  # the binding being emitted, for the source map
        self.vm_funcs = {}  # function index of a referenced VM function -> its name
        self.trailing_kills = _trailing_kills(func.body)
        self.killed = set()  # registers already nulled by a kill on every path to here
        self.alias_names = alias_names(func)

    # -- registers -------------------------------------------------------------------------

    def _new_reg(self):
        reg = self.ib.r(self.num_regs)
        self.num_regs += 1
        return reg

    def _as_reg(self, arg):
        """``arg`` itself if it is a register, else a register holding a copy of it."""
        if arg.kind == ArgKind.REG:
            return arg
        dst = self._new_reg()
        self.ib.emit_call("vm.builtin.copy", [arg], dst=dst)
        return dst

    def _dst(self, var):
        """A new register for ``var``'s value, or None when nothing reads it."""
        if var is not None and var not in self.used:
            return None
        return self._new_reg()

    # -- function --------------------------------------------------------------------------

    def run(self):
        func, ib = self.func, self.ib
        params = func.params
        with ib.function(self.name, num_inputs=len(params),
                         param_names=[p.name_hint for p in params]):
            for param in params:
                self.args.bind(param, self._new_reg())
            try:
                result = self._seq(func.body, top=True)
                ib.emit_ret(self._as_reg(result))
            finally:
                ib.set_source(None, None)

    def _seq(self, seq, top=False):
        if isinstance(seq, SeqExpr):
            for block in seq.blocks:
                self._block(block)
            seq = seq.body
        if top:
            self.binding = "return"
            self.ib.set_source(self.name, "return")
        return self._value(None, seq)

    def _block(self, block):
        if not isinstance(block, BindingBlock):
            raise CodegenError(f"{self.name}: expected a binding block, got {type(block).__name__}")
        for binding in block.bindings:
            if isinstance(binding, MatchCast):
                raise CodegenError(
                    f"{self.name}: binding '{binding.var.name_hint}' is a match_cast; the VM "
                    f"codegen expects it lowered to checks (run VMShapeLower)")
            if not isinstance(binding, VarBinding):
                raise CodegenError(f"{self.name}: unsupported binding {type(binding).__name__}")
            if id(binding) in self.trailing_kills:
                self.args.bind(binding.var, self.ib.void_arg())
                continue
            self.binding = self._source_name(binding)
            self.ib.set_source(self.name, self.binding)
            self.args.bind(binding.var, self._value(binding.var, binding.value))

    def _source_name(self, binding):
        """The binding name for the source map. A destination-passing call whose result
        nothing reads is named after the variable its output argument becomes (``lv0`` for
        ``_ = linear0(x, w, b, alloc); lv0 = alloc``), which is the name the user wrote."""
        value = binding.value
        if (binding.var not in self.used and isinstance(value, Call) and value.args
                and isinstance(value.args[-1], Var) and not isinstance(value.op, Op)):
            out = value.args[-1]
            return self.alias_names.get(out, out.name_hint)
        return binding.var.name_hint

    # -- values ----------------------------------------------------------------------------

    def _value(self, var, value):
        """Emits ``value`` (bound to ``var``, or None for a body); returns its Arg."""
        if isinstance(value, _LEAVES):
            return self.args.arg(value)
        if isinstance(value, Call):
            return self._call(var, value)
        if isinstance(value, (Tuple, TupleGetItem)):
            if var is not None and var not in self.used:
                return self.ib.void_arg()  # pure and unread: nothing to emit
            dst = self._new_reg()
            if isinstance(value, Tuple):
                self.ib.emit_call("vm.builtin.make_tuple", self.args.args(value.fields), dst=dst)
            else:
                tup = self.args.arg(value.tuple_value)
                self.ib.emit_call("vm.builtin.tuple_getitem", [tup, self.ib.imm(value.index)],
                                  dst=dst)
            return dst
        if isinstance(value, If):
            return self._if(value)
        if isinstance(value, SeqExpr):
            return self._seq(value)
        raise CodegenError(f"{self.name}: cannot generate code for a {type(value).__name__}"
                           f"{self._where(var)}; expected the lowered form (calls, tuples, "
                           f"leaves, If)")

    def _where(self, var):
        return f" (binding '{var.name_hint}')" if var is not None else ""

    def _callee_arg(self, gv):
        """The function Arg of a GlobalVar (a kernel or a VM function of the module)."""
        symbol = self.symbols.get(gv.name_hint)
        if symbol is None:
            raise CodegenError(f"{self.name}: reference to '{gv.name_hint}', which is not a "
                               f"function of the module")
        arg = self.ib.f(symbol)
        if isinstance(self.mod[gv], Function):
            self.vm_funcs[arg.value] = symbol
        return arg

    def _call(self, var, call):
        ib, op = self.ib, call.op
        if var is not None and isinstance(op, Op) and op.name == "relax.null_value":
            return ib.void_arg()  # a bound null is a direct argument, like other leaves
        dst = self._new_reg() if var is None else self._dst(var)
        if isinstance(op, Op):
            return self._call_op(var, call, dst)
        if isinstance(op, ExternFunc):
            ib.emit_call(op.global_symbol, self.args.args(call.args), dst=dst)
        elif isinstance(op, GlobalVar):
            self._callee_arg(op)  # checks that the callee exists
            self._check_arity(op, call, var)
            ib.emit_call(self.symbols[op.name_hint], self.args.args(call.args), dst=dst)
        elif isinstance(op, Var):
            closure = self.args.arg(op)
            if closure.kind == ArgKind.FUNC and closure.value in self.vm_funcs:
                # a variable bound to a known Relax function: a direct VM call
                ib.emit_call(self.vm_funcs[closure.value], self.args.args(call.args), dst=dst)
            else:
                ib.emit_call("vm.builtin.invoke_closure",
                             [ib.vm_state(), closure] + self.args.args(call.args), dst=dst)
        else:
            raise CodegenError(f"{self.name}: cannot call a {type(op).__name__}"
                               f"{self._where(var)}")
        return dst if dst is not None else ib.void_arg()

    def _check_arity(self, gv, call, var):
        callee = self.mod[gv]
        expected = len(callee.params)
        if len(call.args) != expected:
            kind = "kernel" if isinstance(callee, PrimFunc) else "function"
            raise CodegenError(f"{self.name}: call of {kind} '{gv.name_hint}'{self._where(var)} "
                               f"passes {len(call.args)} argument(s); it takes {expected}")

    def _call_op(self, var, call, dst):
        ib, args, name = self.ib, call.args, call.op.name
        convert = self.args
        if name == "relax.call_builtin_with_ctx":
            callee, packed = args
            fields = packed.fields if isinstance(packed, Tuple) else (packed,)
            ib.emit_call(callee.global_symbol, [ib.vm_state()] + convert.args(fields), dst=dst)
        elif name == "relax.vm.alloc_storage":
            size, device, dtype, scope = (list(args) + [None] * 4)[:4]
            call_args = [ib.vm_state(), convert.size_arg(size), convert.arg(device),
                         convert.arg(dtype)]
            if isinstance(scope, StringImm) and scope.value not in ("", "global"):
                call_args.append(convert.arg(scope))
            ib.emit_call("vm.builtin.alloc_storage", call_args, dst=dst)
        elif name == "relax.vm.alloc_tensor":
            ib.emit_call("vm.builtin.alloc_tensor", convert.args(args[:4]), dst=dst)
        elif name == "relax.vm.kill_object":
            target = convert.arg(args[0])
            # an alias shares its register: a second kill of it has nothing left to drop
            if target.kind == ArgKind.REG and target.value not in self.killed:
                self.killed.add(target.value)
                ib.emit_call("vm.builtin.null_value", [], dst=target)
            return ib.void_arg()
        elif name == "relax.null_value":
            ib.emit_call("vm.builtin.null_value", [], dst=dst)
        elif name == "relax.shape_of":
            ib.emit_call("vm.builtin.shape_of", convert.args(args), dst=dst)
        elif name == "relax.vm.call_tir_dyn":
            callee, packed = args
            fields = packed.fields if isinstance(packed, Tuple) else (packed,)
            ib.emit_call("vm.builtin.call_tir_dyn", [convert.arg(callee)] + convert.args(fields),
                         dst=dst)
        else:
            raise CodegenError(f"{self.name}: operator {name}{self._where(var)} was not lowered; "
                               f"the VM codegen expects the output of the default pipeline")
        return dst if dst is not None else ib.void_arg()

    def _if(self, node):
        ib = self.ib
        cond = self.args.arg(node.cond)
        if isinstance(node.cond.struct_info_, PrimStructInfo):
            cond = self._as_reg(cond)
        else:
            tensor_cond = cond
            cond = self._new_reg()
            ib.emit_call("vm.builtin.read_if_cond", [tensor_cond], dst=cond)
        merge = self._new_reg()
        else_label, end_label = ib.label(), ib.label()
        ib.emit_if(cond, else_label)
        killed = set(self.killed)
        self._branch(node.true_branch, merge, self.binding)
        ib.emit_goto(end_label)
        ib.bind(else_label)
        killed_true, self.killed = self.killed, killed
        self._branch(node.false_branch, merge, self.binding)
        ib.bind(end_label)
        self.killed &= killed_true
        return merge

    def _branch(self, branch, merge, binding):
        result = self._seq(branch)
        self.binding = binding
        self.ib.set_source(self.name, binding)
        self.ib.emit_call("vm.builtin.copy", [result], dst=merge)
