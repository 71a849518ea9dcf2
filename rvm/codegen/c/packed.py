"""Calls of registered packed functions from generated C kernels (``T.call_packed``).

The callee is looked up by name once and cached; tensors are passed as
DLTensors built over the kernel's own memory, checked to fit it first.
"""
from rvm.codegen.c.prologue import c_string
from rvm.tir import expr as E
from rvm.tir.buffer import Buffer


class PackedCallMixin:
    """The part of CEmitter that renders ``T.evaluate(T.call_packed(name, ...))``."""

    def _call_packed(self, call):
        if self.in_parallel or self.in_simd:  # a return from the call's error path would
            # branch out of an OpenMP structured block, which C compilers refuse
            self.error("call_packed inside a parallel or vectorized loop is not supported; "
                       "expected it in serial code")
        if not call.args or not isinstance(call.args[0], E.StringImm):
            self.error("call_packed needs the function name as its first argument")
        fname = call.args[0].value
        cache = f"rvm_packed_{len([k for k in self.helpers if k.startswith('rvm_packed_')])}"
        label = "".join(c if c.isascii() and (c.isalnum() or c in "._") else "_" for c in fname)
        self.helpers[cache] = f"static RVMObject* {cache} = NULL;  /* {label} */"
        args = call.args[1:]
        n = max(len(args), 1)
        self.emit("{")
        self.indent += 1
        missing = c_string(f"ValueError: {self.name}: global function '{fname}' is not "
                           "registered")
        self.emit(f"RVMObject* rvm_f = __atomic_load_n(&{cache}, __ATOMIC_ACQUIRE);")
        self.emit("if (rvm_f == NULL) {")
        self.emit(f"  if (RVMFuncGetGlobal({c_string(fname)}, &rvm_f) != 0) {self.fail()}")
        self.emit(f"  if (rvm_f == NULL) {{ RVMAPISetLastError({missing}); {self.fail()} }}")
        self.emit(f"  __atomic_store_n(&{cache}, rvm_f, __ATOMIC_RELEASE);")
        self.emit("}")
        self.emit(f"RVMValue rvm_values[{n}];")
        self.emit(f"int rvm_codes[{n}];")
        for k, arg in enumerate(args):
            self._packed_arg(k, arg)
        self.emit("RVMValue rvm_rv;")
        self.emit("int rvm_rc = kRVMNull;")
        self.emit(f"if (RVMFuncCall(rvm_f, rvm_values, rvm_codes, {len(args)}, &rvm_rv, "
                  f"&rvm_rc) != 0) {self.fail()}")
        self.emit("RVMValueRelease(rvm_rv, rvm_rc);")
        self.indent -= 1
        self.emit("}")

    def _packed_arg(self, k, arg):
        if isinstance(arg, Buffer):
            shape = ", ".join(f"(int64_t)({self.expr(d)})" for d in arg.shape) or "0"
            d = arg.dtype
            self._check_packed_buffer(k, arg)
            self.emit(f"int64_t rvm_shape_{k}[{max(len(arg.shape), 1)}] = {{{shape}}};")
            data = self.var_name(arg.data)
            self.emit(f"DLTensor rvm_tensor_{k} = {{(void*){data}, {{1, 0}}, {len(arg.shape)}, "
                      f"{{{d.type_code}, {d.bits}, 1}}, rvm_shape_{k}, NULL, 0}};")
            self.emit(f"rvm_values[{k}].v_handle = &rvm_tensor_{k};")
            self.emit(f"rvm_codes[{k}] = kRVMDLTensorHandle;")
        elif isinstance(arg, E.StringImm):
            self.emit(f"rvm_values[{k}].v_str = {c_string(arg.value)};")
            self.emit(f"rvm_codes[{k}] = kRVMStr;")
        elif arg.dtype.is_handle:
            if self.safe:
                self.error("a raw handle passed to a packed function is refused in kernels "
                           "loaded from a file; pass the buffer")
            self.emit(f"rvm_values[{k}].v_handle = (void*)({self.expr(arg)});")
            self.emit(f"rvm_codes[{k}] = kRVMOpaqueHandle;")
        elif arg.dtype.is_float:
            self.emit(f"rvm_values[{k}].v_float64 = (double)({self.expr(arg)});")
            self.emit(f"rvm_codes[{k}] = kRVMFloat;")
        else:
            self.emit(f"rvm_values[{k}].v_int64 = (int64_t)({self.expr(arg)});")
            self.emit(f"rvm_codes[{k}] = {'kRVMBool' if arg.dtype.is_bool else 'kRVMInt'};")

    def _check_packed_buffer(self, k, arg):
        """Fails unless the bytes of the buffer passed to a packed function (its element
        count times its dtype's size) fit in the bytes of its memory (the memory's element
        count times the size of the memory's elements): a float64 buffer declared over
        float32 memory of the same element count would pass twice the memory's bytes."""
        mem = self._memory_of(arg)
        if id(arg.data) in self.scalars:
            self.error(f"buffer '{arg.name}' of a single register cannot be passed to a "
                       "packed function")
        size, data = mem.c_size or self._c_size(mem), self.var_name(arg.data)
        text = c_string(f"ValueError: {self.name}: buffer '{arg.name}' passed to a packed "
                        f"function ({arg.dtype} x {len(arg.shape)}-d shape) is larger than "
                        "its memory")
        self.emit(f"int64_t rvm_bytes_{k} = {(arg.dtype.bits + 7) // 8}, rvm_owned_{k};")
        self.emit(f"int rvm_bad_{k} = __builtin_mul_overflow((int64_t)({size}), "
                  f"(int64_t)sizeof(*{data}), &rvm_owned_{k});")
        for d in arg.shape:
            dim = f"(int64_t)({self.expr(d)})"
            self.emit(f"rvm_bad_{k} |= {dim} < 0 || __builtin_mul_overflow(rvm_bytes_{k}, "
                      f"{dim}, &rvm_bytes_{k});")
        self.emit(f"if (rvm_bad_{k} || rvm_bytes_{k} > rvm_owned_{k}) "
                  f"{{ RVMAPISetLastError({text}); {self.fail()} }}")
