"""The ``ccompiler`` codegen: C source for subgraphs of elementwise ops, relu and matmul.

As in seed 002's C codegen, each operator becomes a function made by a macro
(``CSOURCE_BINARY_OP(fused_0_0, +, 100)``), each subgraph a function calling
them in order with malloc'ed intermediate buffers, and a packed-ABI wrapper
(named by the subgraph's symbol) that checks its tensors (the inputs, then one
output per value the subgraph returns) and calls it. All
subgraphs of one RunCodegen become one C-source module
(``rvm.runtime.csource_module_create``), compiled against rvm's runtime header.
Tensors are float32 of static shape.
"""
from rvm.codegen.byoc.subgraph import extract_subgraph, register_codegen
from rvm.runtime.csource_module import csource_module_create

BINARY = {"add": "+", "subtract": "-", "multiply": "*", "divide": "/"}
SUPPORTED = set(BINARY) | {"nn.relu", "matmul"}

PRELUDE = r"""#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <rvm/c_runtime_api.h>

#define CSOURCE_BINARY_OP(p_ID_, p_OP_, p_SIZE_)                         \
  static void p_ID_(const float* a, const float* b, float* out) {       \
    for (int64_t i = 0; i < (p_SIZE_); ++i) out[i] = a[i] p_OP_ b[i];    \
  }
#define CSOURCE_RELU(p_ID_, p_SIZE_)                                     \
  static void p_ID_(const float* a, float* out) {                       \
    for (int64_t i = 0; i < (p_SIZE_); ++i) out[i] = a[i] > 0.0f ? a[i] : 0.0f; \
  }
#define CSOURCE_MATMUL(p_ID_, p_M_, p_K_, p_N_)                          \
  static void p_ID_(const float* a, const float* b, float* out) {       \
    for (int64_t i = 0; i < (p_M_); ++i)                                  \
      for (int64_t j = 0; j < (p_N_); ++j) {                              \
        float acc = 0.0f;                                                 \
        for (int64_t k = 0; k < (p_K_); ++k) acc += a[i * (p_K_) + k] * b[k * (p_N_) + j]; \
        out[i * (p_N_) + j] = acc;                                        \
      }                                                                   \
  }

/* The float32 data of argument `index` of `func`, checked against `shape`; NULL after
   setting the error when it is not such a compact tensor. */
static float* ccompiler_tensor(RVMValue value, int code, int ndim, const int64_t* shape,
                               const char* func, int index) {
  char msg[256];
  DLTensor* t = NULL;
  if (code == kRVMNDArrayHandle) t = &((RVMNDArray*)value.v_handle)->dl;
  else if (code == kRVMDLTensorHandle) t = (DLTensor*)value.v_handle;
  if (t == NULL) {
    snprintf(msg, sizeof(msg), "TypeError: %s: argument %d must be a tensor (type code %d)",
             func, index, code);
    RVMAPISetLastError(msg);
    return NULL;
  }
  int ok = t->dtype.code == kDLFloat && t->dtype.bits == 32 && t->dtype.lanes == 1 &&
           t->ndim == ndim;
  int64_t stride = 1;
  for (int d = ndim - 1; ok && d >= 0; --d) {
    ok = t->shape[d] == shape[d] && (t->strides == NULL || shape[d] == 1 ||
                                     t->strides[d] == stride);
    stride *= shape[d];
  }
  if (!ok) {
    snprintf(msg, sizeof(msg), "ValueError: %s: argument %d must be a compact float32 tensor "
             "of rank %d with the compiled shape", func, index, ndim);
    RVMAPISetLastError(msg);
    return NULL;
  }
  return (float*)((char*)t->data + t->byte_offset);
}
"""


def _size(shape):
    size = 1
    for d in shape:
        size *= d
    return size


class _SubgraphEmitter:
    """The C of one subgraph: operator functions, the subgraph function, the wrapper."""

    def __init__(self, graph):
        self.graph = graph
        self.decls = []
        self.body = []
        self.buffers = []

    def emit(self):
        g = self.graph
        names = {ident: f"in{k}" for k, (ident, _, _) in enumerate(g.inputs)}
        written = {}  # node id -> the output it is computed into
        for j, ident in enumerate(g.outputs):
            written.setdefault(ident, f"out{j}")
        for k, node in enumerate(g.nodes):
            func = f"{g.name}_{k}"
            out = written.get(node.id)
            if out is None:
                out = f"buf_{len(self.buffers)}"
                self.buffers.append((out, _size(node.shape)))
            names[node.id] = out
            ins = [names[i] for i in node.inputs]
            if node.op in BINARY:
                self.decls.append(f"CSOURCE_BINARY_OP({func}, {BINARY[node.op]}, "
                                  f"{_size(node.shape)})")
            elif node.op == "nn.relu":
                self.decls.append(f"CSOURCE_RELU({func}, {_size(node.shape)})")
            else:  # matmul
                m, k_dim = self.graph.shape_of(node.inputs[0])
                self.decls.append(f"CSOURCE_MATMUL({func}, {m}, {k_dim}, {node.shape[1]})")
            self.body.append(f"  {func}({', '.join(ins + [out])});")
        for j, ident in enumerate(g.outputs):  # an input returned, or a value returned twice
            if names[ident] != f"out{j}":
                size = _size(g.shape_of(ident))
                self.body.append(f"  memcpy(out{j}, {names[ident]}, sizeof(float) * {size});")
        return "\n".join(self.decls + [""] + self._function() + [""] + self._wrapper())

    def _function(self):
        g = self.graph
        params = [f"const float* in{k}" for k in range(len(g.inputs))] + \
            [f"float* out{j}" for j in range(len(g.outputs))]
        lines = [f"static int {g.name}_({', '.join(params)}) {{"]
        for name, size in self.buffers:
            lines.append(f"  float* {name} = (float*)malloc(sizeof(float) * {size});")
        if self.buffers:
            missing = " || ".join(f"!{name}" for name, _ in self.buffers)
            frees = " ".join(f"free({name});" for name, _ in self.buffers)
            lines += [f"  if ({missing}) {{",
                      f"    {frees}",
                      f'    RVMAPISetLastError("MemoryError: {g.name}: out of memory");',
                      "    return -1;", "  }"]
        lines += self.body
        lines += [f"  free({name});" for name, _ in self.buffers]
        return lines + ["  return 0;", "}"]

    def _wrapper(self):
        g = self.graph
        n = len(g.inputs) + len(g.outputs)
        lines = [f"RVM_DLL int {g.name}(RVMValue* args, int* type_codes, int num_args, "
                 "RVMValue* ret, int* ret_code, void* resource) {",
                 f"  if (num_args != {n}) {{",
                 "    char msg[160];",
                 f'    snprintf(msg, sizeof(msg), "ValueError: {g.name} expects {len(g.inputs)} '
                 f'inputs and {len(g.outputs)} output tensors, got %d arguments", num_args);',
                 "    RVMAPISetLastError(msg);", "    return -1;", "  }"]
        shapes = [shape for _, shape, _ in g.inputs] + [g.shape_of(i) for i in g.outputs]
        for k, shape in enumerate(shapes):
            lines.append(f"  static const int64_t shape{k}[] = {{{', '.join(map(str, shape))}}};")
            lines.append(f"  float* a{k} = ccompiler_tensor(args[{k}], type_codes[{k}], "
                         f'{len(shape)}, shape{k}, "{g.name}", {k});')
            lines.append(f"  if (!a{k}) return -1;")
        lines.append("  *ret_code = kRVMNull;")
        lines.append(f"  return {g.name}_({', '.join(f'a{k}' for k in range(n))});")
        return lines + ["}"]


def _check_float32(graph):
    dtypes = {d for _, _, d in graph.inputs} | {n.dtype for n in graph.nodes}
    if dtypes != {"float32"}:
        raise ValueError(f"ccompiler: subgraph '{graph.name}' uses {sorted(dtypes)}; only "
                         "float32 is supported")


def generate_c(functions):
    """The C source of the Codegen functions ``functions`` and their symbols."""
    parts, names = [PRELUDE], []
    for func in functions:
        graph = extract_subgraph(func, "ccompiler", SUPPORTED)
        _check_float32(graph)
        parts.append(_SubgraphEmitter(graph).emit())
        names.append(graph.name)
    return "\n\n".join(parts) + "\n", names


@register_codegen("ccompiler")
def ccompiler_codegen(functions, options=None, constant_names=None):
    """RunCodegen's entry for ``Codegen="ccompiler"``: one C-source module of ``functions``."""
    source, names = generate_c(functions)
    return [csource_module_create(source, "c", names)]
