"""The argument-checking prologue of a generated C kernel.

For each parameter it checks the argument's type code, rank, dtype and
device, then binds symbolic dimensions and checks every other dimension
against constants and already bound variables, in the order of the
KernelSignature plan. Every failure sets an error naming the kernel and the
parameter ("ValueError: ..."/"TypeError: ...") and returns -1.
"""
from rvm.codegen.c import narrow as c_narrow
from rvm.tir.expr_printer import dim_text


def c_string(text):
    """``text`` as a C string literal."""
    out = []
    for ch in text:
        if ch in "\\\"":
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif ord(ch) < 32 or ord(ch) > 126:
            out.extend(f"\\{b:03o}" for b in ch.encode("utf-8"))
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def render_prologue(sig, emitter):
    """Lines checking the arguments of ``sig`` and binding tensors, shapes and scalars.

    ``emitter`` names variables (``emitter.define(var, hint)``), renders
    expressions and gives C types.
    """
    kname = c_string(sig.name)
    # Names never go into a printf format: the text around the count is passed as %s
    # arguments (the count comes after every name, hence the last placeholder).
    head, _, tail = ("ValueError: " + sig.arity_message("\0")).rpartition("\0")
    lines = [f"static const char* const kernel = {kname};",
             "*ret_code = kRVMNull;",
             f"if (num_args != {len(sig.params)}) {{",
             "  char msg[512];",
             f"  snprintf(msg, sizeof(msg), \"%s%d%s\", {c_string(head)}, num_args, "
             f"{c_string(tail)});",
             "  RVMAPISetLastError(msg);",
             "  return -1;",
             "}"]
    tensors = {}
    for p in sig.params:
        pname = c_string(p.name)
        if p.kind == "scalar":
            lines.extend(_scalar_param(p, pname, emitter))
            continue
        t = emitter.fresh(f"t_{p.name}")
        tensors[p.index] = t
        lines.append(f"DLTensor* {t} = rvm_arg_tensor(kernel, {pname}, args[{p.index}], "
                     f"type_codes[{p.index}]);")
        lines.append(f"if ({t} == NULL) return -1;")
        dtype = p.dtype
        lines.append(f"if (rvm_check_tensor(kernel, {pname}, {t}, {len(p.shape)}, "
                     f"{dtype.type_code}, {dtype.bits}, {c_string(p.expect)}) != 0) return -1;")
    for step in sig.steps:
        t = tensors[step.param.index]
        got = f"{t}->shape[{step.axis}]"
        pname = c_string(step.param.name)
        expect = c_string(step.param.expect)
        if step.action == "bind":
            name = emitter.define(step.dim, step.dim.name_hint)
            ctype = emitter.ctype(step.dim.dtype)
            # A dimension variable holds the exact dimension (the bounds proofs rely on it).
            lines.append(f"if ({got} < 0 || (int64_t)({ctype}){got} != {got}) return "
                         f"rvm_dim_error(kernel, {pname}, {step.axis}, (long long){got}, "
                         f"{c_string(str(step.dim.dtype))});")
            lines.append(f"const {ctype} {name} = ({ctype}){got};")
            continue
        want = emitter.expr(step.dim)
        what = c_string(dim_text(step.dim))
        lines.append(f"if ({got} != (int64_t)({want})) return rvm_shape_error(kernel, {pname}, "
                     f"{step.axis}, {expect}, {what}, (long long)({want}), (long long){got});")
    for p in sig.params:
        if p.kind != "tensor":
            continue
        t = tensors[p.index]
        ctype = emitter.storage_ctype(p.dtype)
        name = emitter.define(p.buffer.data, p.name)
        qualifier = " restrict" if emitter.noalias else ""
        lines.append(f"{ctype}*{qualifier} {name} = ({ctype}*)((char*){t}->data + "
                     f"{t}->byte_offset);")
        emitter.declare_param_memory(p, t)
    return lines


def _scalar_param(p, pname, emitter):
    ctype = emitter.ctype(p.dtype)
    name = emitter.define(p.var, p.name)
    i = p.index
    if p.dtype.is_float:
        accepted = f"type_codes[{i}] != kRVMFloat && type_codes[{i}] != kRVMInt"
        read = (f"(type_codes[{i}] == kRVMFloat ? ({ctype})args[{i}].v_float64 : "
                f"({ctype})args[{i}].v_int64)")
        if p.dtype.is_narrow_float:  # a value of the narrow type, as the kernel computes it
            read = c_narrow.cast(p.dtype, p.dtype, read)
    else:
        accepted = f"type_codes[{i}] != kRVMInt && type_codes[{i}] != kRVMBool"
        read = f"({ctype})args[{i}].v_int64"
    lines = [f"if ({accepted}) return rvm_scalar_error(kernel, {pname}, {c_string(p.expect)}, "
             f"type_codes[{i}]);",
             f"const {ctype} {name} = {read};"]
    if p.is_size:  # the text around the value is passed as %s arguments (no name in a format)
        head, _, tail = ("ValueError: " + p.size_error(emitter.name, "\0")).partition("\0")
        lines += [f"if ({name} < 0) {{",
                  "  char msg[512];",
                  f"  snprintf(msg, sizeof(msg), \"%s%lld%s\", {c_string(head)}, "
                  f"(long long){name}, {c_string(tail)});",
                  "  RVMAPISetLastError(msg);",
                  "  return -1;",
                  "}"]
    return lines
