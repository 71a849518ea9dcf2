"""BlockBuilder: builds Relax functions binding by binding, inside function/dataflow scopes.

>>> from rvm.relax.struct_info import TensorStructInfo
>>> from rvm.relax.expr import Var
>>> x = Var("x", TensorStructInfo((4,), "float32"))
>>> bb = BlockBuilder()
>>> with bb.function("main", params=[x]):
...     with bb.dataflow():
...         y = bb.emit_output(x)
...     gv = bb.emit_func_output(y)
>>> [gv.name_hint for gv in bb.get().get_global_vars()]
['main']
"""
import contextlib

from rvm.ir.expr import BaseFunc
from rvm.ir.module import IRModule
from rvm.ir.base import structural_equal, structural_hash
from rvm.relax.binding import BindingBlock, DataflowBlock, MatchCast, SeqExpr, VarBinding
from rvm.relax.expr import DataflowVar, Tuple, Var
from rvm.relax.function import Function
from rvm.relax.normalizer import Normalizer, _BlockFrame
from rvm.relax.op.base import call_tir
from rvm.relax.struct_info import StructInfo
from rvm.relax.te_bridge import lower_te_call


class _FunctionFrame:
    def __init__(self, name, params, attrs, pure, private):
        self.name = name
        self.params = params
        self.attrs = attrs
        self.pure = pure
        self.private = private
        self.blocks = []
        self.gvar = None


def _check_params(params, who):
    params = [params] if isinstance(params, Var) else list(params)
    for i, param in enumerate(params):
        if not isinstance(param, Var) or isinstance(param, DataflowVar):
            raise TypeError(f"{who}: parameter {i} must be a relax.Var, got "
                            f"{type(param).__name__}")
    return params


class BlockBuilder(Normalizer):
    """Builds an IRModule: Relax functions through scopes and ``emit_*``, PrimFuncs through
    ``emit_te``/``add_func``.

    ``mod`` is a module to extend (copied). See the module docstring for an example.
    """

    _current = []  # builders inside a function scope, innermost last (BlockBuilder.current())

    def __init__(self, mod=None, check_global_vars=True):
        super().__init__(mod.copy() if mod is not None else IRModule(), check_global_vars)
        self._func = None
        self._block_stack = []  # blocks interrupted by _begin_*_block, innermost last
        self._outer_funcs = []  # (function, block, block stack) of enclosing function scopes
        self._output_of = {}
        self._hash_to_gvars = None  # structural hash -> GlobalVars, built on first add_func

    @staticmethod
    def current():
        """The BlockBuilder whose function scope is innermost, or None (TVM's
        ``BlockBuilder.current()``)."""
        return BlockBuilder._current[-1] if BlockBuilder._current else None

    # -- scopes ---------------------------------------------------------------------------
    @contextlib.contextmanager
    def function(self, name, params=None, attrs=None, pure=True, private=False):
        """Scope of a Relax function ``name``; ends with ``emit_func_output``.

        ``params`` may be given here or to ``emit_func_output``. Unless
        ``private``, the function gets the ``global_symbol`` attribute ``name``.
        A function scope may open inside another (as in TVM): the inner
        function is added to the module when it ends, and the outer one
        continues where it was (its GlobalVar can be called from there).
        """
        if not isinstance(name, str):
            raise TypeError(f"bb.function: name must be a str, got {type(name).__name__}")
        enclosing = [f.name for f, _, _ in self._outer_funcs if f is not None] + \
            ([self._func.name] if self._func is not None else [])
        if name in enclosing:
            raise ValueError(f"bb.function('{name}'): already inside the scope of function "
                             f"'{name}'; a nested function needs a name of its own")
        if params is not None:
            params = _check_params(params, f"bb.function('{name}')")
        frame = _FunctionFrame(name, params, dict(attrs or {}), pure, private)
        self._outer_funcs.append((self._func, self._block, self._block_stack))
        self._func, self._block, self._block_stack = frame, _BlockFrame(is_dataflow=False), []
        BlockBuilder._current.append(self)
        try:
            yield frame
            if frame.gvar is None:
                raise ValueError(f"function '{name}': the scope ended without "
                                 "bb.emit_func_output(...)")
        finally:
            BlockBuilder._current.pop()
            self._func, self._block, self._block_stack = self._outer_funcs.pop()

    @contextlib.contextmanager
    def dataflow(self):
        """Scope of a dataflow block: emitted values are DataflowVars unless ``emit_output``."""
        self._require_function("bb.dataflow()")
        if self._block.is_dataflow:
            raise ValueError("bb.dataflow(): already inside a dataflow block; they do not nest")
        self._flush_block()
        self._begin_dataflow_block()
        frame = self._func
        try:
            yield
        finally:
            if self._func is frame and self._block is not None and self._block.is_dataflow:
                self._flush_block()
                self._begin_binding_block()

    def _require_function(self, who):
        if self._func is None or self._block is None:
            raise ValueError(f"{who} must be called inside 'with bb.function(...)'")

    def _require_block(self, who):
        if self._block is None:
            raise ValueError(f"{who} must be called inside 'with bb.function(...)' or a block "
                             "begun by bb._begin_binding_block()/_begin_dataflow_block()")

    def _begin_dataflow_block(self):
        """Begins a dataflow block (TVM's developer API): emitted values are DataflowVars
        until ``_end_block``. The block open before, if any, resumes after it."""
        self._block_stack.append(self._block)
        self._block = _BlockFrame(is_dataflow=True)

    def _begin_binding_block(self):
        """Begins a binding block (TVM's developer API), ended by ``_end_block``."""
        self._block_stack.append(self._block)
        self._block = _BlockFrame(is_dataflow=False)

    def _end_block(self):
        """Ends the innermost block and returns it (a DataflowBlock or BindingBlock, possibly
        empty); the block open before it resumes."""
        if self._block is None:
            raise ValueError("bb._end_block(): no block is open; expected "
                             "bb._begin_binding_block() or bb._begin_dataflow_block() first")
        block = self._block
        self._block = self._block_stack.pop() if self._block_stack else None
        return (DataflowBlock if block.is_dataflow else BindingBlock)(block.bindings)

    def _flush_block(self):
        """Ends the current block of the function, keeping it when it has bindings."""
        block = self._end_block()
        if block.bindings:
            self._func.blocks.append(block)

    # -- emitting -------------------------------------------------------------------------
    def emit(self, expr, name_hint=""):
        """Binds ``expr`` (normalized) to a new variable and returns it: a DataflowVar inside a
        dataflow block, a Var elsewhere."""
        self._require_block("bb.emit")
        expr = self.normalize(expr)
        var = self._new_var(name_hint, expr.struct_info_, self._block.is_dataflow)
        return self._append(VarBinding(var, expr))

    def emit_normalized(self, binding):
        """Appends a binding whose value is already normalized; returns its variable."""
        self._require_block("bb.emit_normalized")
        if not isinstance(binding, (VarBinding, MatchCast)):
            raise TypeError(f"bb.emit_normalized expects a VarBinding or MatchCast, got "
                            f"{type(binding).__name__}")
        return self._append(binding)

    def match_cast(self, value, struct_info, name_hint=""):
        """Emits ``match_cast(value, struct_info)``, returning a variable of ``struct_info``.

        Symbolic variables that first appear in ``struct_info`` are defined by it.
        """
        self._require_block("bb.match_cast")
        if not isinstance(struct_info, StructInfo):
            raise TypeError(f"bb.match_cast: struct_info must be a StructInfo, got "
                            f"{type(struct_info).__name__}")
        value = self.normalize_argument(value)
        var = self._new_var(name_hint, struct_info, self._block.is_dataflow)
        return self._append(MatchCast(var, value, struct_info))

    def emit_output(self, output, name_hint=""):
        """Inside a dataflow block, binds ``output`` to a Var visible after the block."""
        self._require_block("bb.emit_output")
        if not self._block.is_dataflow:
            raise ValueError("bb.emit_output must be called inside 'with bb.dataflow()'; "
                             "outside a dataflow block use bb.emit")
        if isinstance(output, (list, tuple)):
            output = Tuple(output)
        value = self.normalize(output)
        var = self._new_var(name_hint or "gv", value.struct_info_, dataflow=False)
        self._append(VarBinding(var, value))
        if isinstance(output, DataflowVar):
            self._output_of[id(output)] = var
        return var

    def emit_func_output(self, output, params=None):
        """Ends the current function with result ``output`` (an expression or a list, made a
        Tuple) and adds it to the module; returns its GlobalVar.

        A DataflowVar already passed to ``emit_output`` stands for the Var
        that emit_output returned.
        """
        self._require_function("bb.emit_func_output")
        frame = self._func
        if self._block.is_dataflow:
            raise ValueError(f"function '{frame.name}': bb.emit_func_output must be called "
                             "outside the dataflow block; end 'with bb.dataflow()' first")
        if frame.gvar is not None:
            raise ValueError(f"function '{frame.name}': bb.emit_func_output was already called")
        if params is not None and frame.params is not None:
            raise ValueError(f"function '{frame.name}': params given both to bb.function and "
                             "to bb.emit_func_output; give them once")
        if params is None and frame.params is None:
            raise ValueError(f"function '{frame.name}': no params; expected "
                             "bb.function(name, params=[...]) or "
                             "bb.emit_func_output(output, params=[...])")
        params = frame.params if params is None else _check_params(
            params, f"function '{frame.name}': emit_func_output")
        if isinstance(output, (list, tuple)):
            output = Tuple([self._emitted_output(o) for o in output])
        output = self.normalize(self._emitted_output(output))
        self._flush_block()
        attrs = dict(frame.attrs)
        if not frame.private:
            attrs.setdefault("global_symbol", frame.name)
        func = Function(params, SeqExpr(frame.blocks, output), is_pure=frame.pure,
                        attrs=attrs or None)
        if frame.name in self._mod:
            raise ValueError(f"function '{frame.name}': the module already has a function of "
                             "that name")
        frame.gvar = _with_sinfo(self._mod.add(frame.name, func), func)
        return frame.gvar

    def _emitted_output(self, expr):
        if isinstance(expr, DataflowVar) and id(expr) in self._output_of:
            return self._output_of[id(expr)]
        if isinstance(expr, Tuple):
            fields = [self._emitted_output(f) for f in expr.fields]
            if any(a is not b for a, b in zip(fields, expr.fields)):
                return Tuple(fields, expr.span)
        return expr

    # -- TE -------------------------------------------------------------------------------
    def call_te(self, func, *args, **kwargs):
        """The call_tir of the PrimFunc made from the TE function ``func`` applied to ``args``.

        Tensor-valued Relax arguments become ``te.placeholder``s (named after
        the variables; any other, a constant, by its position: A, B, ... as TVM
        names it); other arguments pass through. The PrimFunc is added
        to the module under a unique name (``primfunc_name_hint`` or the
        function's name), reusing an identical one already there.
        """
        name_hint = kwargs.pop("primfunc_name_hint", None)
        prim_func, relax_args, out_sinfo, tir_vars = lower_te_call(self, func, args, kwargs)
        if name_hint is None:
            name_hint = getattr(func, "__name__", "")
            if not name_hint.isidentifier():  # a lambda's "<lambda>" cannot name a function
                name_hint = "te_func"
        gvar = self.add_func(prim_func, name_hint)
        return call_tir(gvar, relax_args, out_sinfo, tir_vars=tir_vars or None)

    def emit_te(self, func, *args, **kwargs):
        """Emits ``call_te(func, *args, **kwargs)``; ``name_hint`` names the result variable.

        Returns a DataflowVar inside a dataflow block.
        """
        name_hint = kwargs.pop("name_hint", "")
        return self.emit(self.call_te(func, *args, **kwargs), name_hint=name_hint)

    # -- the module -----------------------------------------------------------------------
    def add_func(self, func, func_name):
        """Adds ``func`` under a unique name derived from ``func_name`` and returns its
        GlobalVar; a structurally equal function already added is reused."""
        if self._hash_to_gvars is None:
            self._hash_to_gvars = {}
            for gvar, existing in self._mod.items():
                self._hash_to_gvars.setdefault(structural_hash(existing), []).append(gvar)
        key = structural_hash(func)
        for gvar in self._hash_to_gvars.get(key, ()):
            if gvar.name_hint in self._mod and structural_equal(self._mod[gvar], func):
                return gvar
        name = func_name
        suffix = 1
        while name in self._mod:
            name = f"{func_name}{suffix}"
            suffix += 1
        gvar = _with_sinfo(self._mod.add(name, func), func)
        self._hash_to_gvars.setdefault(key, []).append(gvar)
        return gvar

    def update_func(self, gvar, func):
        """Replaces the function of ``gvar`` in the module."""
        self._mod.update_func(gvar, func)
        gvar = _with_sinfo(self._mod.get_global_var(gvar.name_hint), func)
        if self._hash_to_gvars is not None:
            self._hash_to_gvars.setdefault(structural_hash(func), []).append(gvar)

    def finalize(self):
        """The module built, with every public function named by its ``global_symbol``
        (TVM's ``bb.finalize()``): a function added under another name is renamed, and a
        private function holding that name moves aside. Two public functions claiming one
        symbol are an error. GlobalVars returned before are renamed in place."""
        if self._func is not None:
            raise ValueError(f"bb.finalize() inside the scope of function '{self._func.name}'; "
                             "call it after the 'with bb.function(...)' block")
        claimed = {}
        for gvar, func in self._mod.items():
            symbol = func.get_attr("global_symbol") if isinstance(func, BaseFunc) else None
            if symbol is None:
                continue
            if symbol in claimed:
                raise ValueError(f"bb.finalize(): functions '{claimed[symbol].name_hint}' and "
                                 f"'{gvar.name_hint}' are both public as '{symbol}'; make one "
                                 "private or give it another global_symbol")
            claimed[symbol] = gvar
        for symbol, gvar in claimed.items():
            if gvar.name_hint == symbol:
                continue
            holder = self._mod.get_global_var(symbol) if symbol in self._mod else None
            if holder is not None:
                _rename(holder, self._fresh_name(symbol, claimed))
            _rename(gvar, symbol)
        return self._mod.copy()

    def _fresh_name(self, base, reserved):
        suffix = 1
        while f"{base}_{suffix}" in self._mod or f"{base}_{suffix}" in reserved:
            suffix += 1
        return f"{base}_{suffix}"

    def get(self):
        """The module built so far (a copy); not allowed inside a function scope."""
        if self._func is not None:
            raise ValueError(f"bb.get() inside the scope of function '{self._func.name}'; "
                             "call it after the 'with bb.function(...)' block")
        return self._mod.copy()

    def current_function_name(self):
        """The name of the function being built, or None."""
        return self._func.name if self._func is not None else None


def _rename(gvar, name):
    object.__setattr__(gvar, "name_hint", name)


def _with_sinfo(gvar, func):
    # As in TVM, the GlobalVar of a Relax function carries the function's struct info.
    if isinstance(func, Function) and func.struct_info_ is not None:
        object.__setattr__(gvar, "struct_info_", func.struct_info_)
    return gvar
