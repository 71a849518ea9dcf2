/* Construction of the native engine: decoding a VM function's instruction
 * words (checked word by word: a damaged executable is refused here, never
 * run) into instructions with argument templates, and tearing it down. */
#include <stdlib.h>
#include <string.h>

#include "vm_engine.h"

#define VALUE_BITS 56
#define VALUE_MASK ((1LL << VALUE_BITS) - 1)
#define MAX_ARGS (1 << 16)

enum { kOpcodeCall = 1, kOpcodeRet = 2, kOpcodeGoto = 3, kOpcodeIf = 4 };

typedef struct {
  const int64_t* words;
  Py_ssize_t n, pos;
  const char* name;
  int32_t instr;
} Reader;

static int bad(Reader* r, const char* what) {
  PyErr_Format(PyExc_ValueError, "native VM: function '%s', instruction %d: %s", r->name,
               (int)r->instr, what);
  return -1;
}

static int take(Reader* r, int64_t* out) {
  if (r->pos >= r->n) return bad(r, "truncated");
  *out = r->words[r->pos++];
  return 0;
}

static int check_reg(Reader* r, int64_t reg, int32_t num_regs, int allow_void) {
  if ((allow_void && reg == -1) || (reg >= 0 && reg < num_regs)) return 0;
  char msg[96];
  snprintf(msg, sizeof(msg), "register %lld out of range (%d registers)", (long long)reg,
           (int)num_regs);
  return bad(r, msg);
}

/* Reads the words into a C array; every word must be an int64. */
static int64_t* read_words(PyObject* words, Py_ssize_t* n) {
  PyObject* fast = PySequence_Fast(words, "native VM: instruction words must be a sequence");
  if (fast == NULL) return NULL;
  *n = PySequence_Fast_GET_SIZE(fast);
  int64_t* out = (int64_t*)malloc(sizeof(int64_t) * (size_t)(*n > 0 ? *n : 1));
  if (out == NULL) {
    Py_DECREF(fast);
    PyErr_NoMemory();
    return NULL;
  }
  for (Py_ssize_t i = 0; i < *n; ++i) {
    int overflow = 0;
    long long w = PyLong_AsLongLongAndOverflow(PySequence_Fast_GET_ITEM(fast, i), &overflow);
    if (overflow != 0 || (w == -1 && PyErr_Occurred())) {
      if (!PyErr_Occurred())
        PyErr_Format(PyExc_ValueError, "native VM: word %zd is not an int64", i);
      free(out);
      Py_DECREF(fast);
      return NULL;
    }
    out[i] = (int64_t)w;
  }
  Py_DECREF(fast);
  return out;
}

/* Pass 1 counts instructions and arguments and checks the layout. */
static int count_code(Reader* r, int32_t* instrs, int64_t* args, int64_t* regs) {
  *instrs = 0;
  *args = *regs = 0;
  int64_t w, count;
  for (r->pos = 0, r->instr = 0; r->pos < r->n; ++r->instr) {
    if (take(r, &w) != 0) return -1;
    switch (w) {
      case kOpcodeCall:
        if (take(r, &w) != 0 || take(r, &w) != 0 || take(r, &count) != 0) return -1;
        if (count < 0 || count > MAX_ARGS) return bad(r, "bad argument count");
        for (int64_t k = 0; k < count; ++k) {
          if (take(r, &w) != 0) return -1;
          if ((w >> VALUE_BITS) == kVMArgReg) ++*regs;
        }
        *args += count;
        break;
      case kOpcodeRet:
      case kOpcodeGoto:
        if (take(r, &w) != 0) return -1;
        break;
      case kOpcodeIf:
        if (take(r, &w) != 0 || take(r, &w) != 0) return -1;
        break;
      default:
        return bad(r, "unknown opcode");
    }
  }
  *instrs = r->instr;
  return 0;
}

static int decode_arg(RVMVirtualMachine* vm, RVMVMFunc* f, Reader* r, int64_t word, int32_t slot,
                      int32_t pos, int32_t* nregs) {
  int64_t kind = (int64_t)((uint64_t)word >> VALUE_BITS);
  int64_t value = word & VALUE_MASK;
  RVMValue* v = &f->arg_values[slot];
  int* code = &f->arg_codes[slot];
  PyObject** py = &f->arg_py[slot];
  v->v_int64 = 0;
  *code = kRVMNull;
  *py = NULL;
  switch (kind) {
    case kVMArgReg:
      if (check_reg(r, value, f->num_regs, 0) != 0) return -1;
      f->reg_slots[*nregs].pos = pos;
      f->reg_slots[*nregs].reg = (int32_t)value;
      ++*nregs;
      return 0;
    case kVMArgImm:
      if (value > (VALUE_MASK >> 1)) value -= 1LL << VALUE_BITS;
      v->v_int64 = value;
      *code = kRVMInt;
      *py = PyLong_FromLongLong(value);
      return *py == NULL ? -1 : 0;
    case kVMArgConst:
      if (value >= vm->num_consts) return bad(r, "constant index out of range");
      *v = vm->const_values[value];
      *code = vm->const_codes[value];
      *py = PyList_GET_ITEM(vm->const_list, value);
      Py_INCREF(*py);
      return 0;
    case kVMArgFunc: {
      if (value >= vm->num_funcs) return bad(r, "function index out of range");
      RVMVMCallee* c = &vm->pool[value];
      if (c->kind == kVMCalleeVM && c->box != NULL) {
        v->v_handle = c->box; /* the function's closure */
        *code = kRVMObjectHandle;
      } else if (c->handle != NULL && c->py != NULL) {
        v->v_handle = c->handle;
        *code = kRVMPackedFuncHandle;
      } else {
        return bad(r, "function value without an implementation");
      }
      *py = c->py;
      Py_INCREF(*py);
      return 0;
    }
    case kVMArgVoid:
      *py = Py_None;
      Py_INCREF(*py);
      return 0;
    case kVMArgVMState:
      v->v_handle = vm;
      *code = kRVMOpaqueHandle;
      *py = vm->vm;
      Py_INCREF(*py);
      return 0;
    default:
      return bad(r, "unknown argument kind");
  }
}

static int32_t call_op(int kind) {
  switch (kind) {
    case kVMCalleeVM:
      return kVMOpCallVM;
    case kVMCalleeNative:
      return kVMOpCallNative;
    case kVMCalleeC:
      return kVMOpCallC;
    case kVMCalleeInvoke:
      return kVMOpInvoke;
    default:
      return kVMOpCallPy;
  }
}

/* Pass 2 fills the instructions and templates; jump targets are checked. */
static int fill_code(RVMVirtualMachine* vm, RVMVMFunc* f, Reader* r) {
  int32_t arg_slot = 0, reg_slot = 0;
  int64_t w = 0, dst = 0, func = 0, count = 0, reg = 0, offset = 0;
  for (r->pos = 0, r->instr = 0; r->pos < r->n; ++r->instr) {
    RVMVMInstr* ins = &f->code[r->instr];
    memset(ins, 0, sizeof(*ins));
    take(r, &w);
    switch (w) {
      case kOpcodeCall:
        take(r, &dst);
        take(r, &func);
        take(r, &count);
        if (check_reg(r, dst, f->num_regs, 1) != 0) return -1;
        if (func < 0 || func >= vm->num_funcs) return bad(r, "function index out of range");
        ins->op = call_op(vm->pool[func].kind);
        ins->dst = (int32_t)dst;
        ins->callee = (int32_t)func;
        ins->nargs = (int32_t)count;
        ins->first_arg = arg_slot;
        ins->first_reg = reg_slot;
        for (int64_t k = 0; k < count; ++k) {
          take(r, &w);
          if (decode_arg(vm, f, r, w, arg_slot, (int32_t)k, &reg_slot) != 0) return -1;
          ++arg_slot;
        }
        ins->nregs = reg_slot - ins->first_reg;
        break;
      case kOpcodeRet:
        take(r, &reg);
        if (check_reg(r, reg, f->num_regs, 0) != 0) return -1;
        ins->op = kVMOpRet;
        ins->callee = (int32_t)reg;
        break;
      case kOpcodeGoto:
      case kOpcodeIf:
        reg = 0;
        if (w == kOpcodeIf) {
          take(r, &reg);
          if (check_reg(r, reg, f->num_regs, 0) != 0) return -1;
        }
        take(r, &offset);
        ins->op = w == kOpcodeIf ? kVMOpIf : kVMOpGoto;
        ins->callee = (int32_t)reg;
        if (offset < -(int64_t)f->num_instrs || offset > (int64_t)f->num_instrs ||
            r->instr + offset < 0 || r->instr + offset >= f->num_instrs)
          return bad(r, "jump target outside the function");
        ins->target = (int32_t)(r->instr + offset);
        break;
    }
  }
  RVMVMInstr* last = &f->code[f->num_instrs - 1];
  if (last->op != kVMOpRet && last->op != kVMOpGoto) {
    r->instr = f->num_instrs - 1;
    return bad(r, "the function does not end in RET or GOTO");
  }
  return 0;
}

int rvm_vm_decode_function(RVMVirtualMachine* vm, int32_t index, PyObject* words_obj) {
  RVMVMFunc* f = &vm->funcs[index];
  Py_ssize_t n;
  int64_t* words = read_words(words_obj, &n);
  if (words == NULL) return -1;
  Reader r = {words, n, 0, f->name, 0};
  int64_t num_args, num_reg_args;
  int rc = count_code(&r, &f->num_instrs, &num_args, &num_reg_args);
  if (rc == 0 && f->num_instrs == 0) rc = bad(&r, "the function has no instructions");
  if (rc == 0 && (f->num_regs < f->num_args || f->num_args < 0))
    rc = bad(&r, "fewer registers than arguments");
  if (rc == 0) {
    f->code = (RVMVMInstr*)calloc((size_t)f->num_instrs, sizeof(RVMVMInstr));
    size_t na = (size_t)(num_args > 0 ? num_args : 1);
    f->arg_values = (RVMValue*)calloc(na, sizeof(RVMValue));
    f->arg_codes = (int*)calloc(na, sizeof(int));
    f->arg_py = (PyObject**)calloc(na, sizeof(PyObject*));
    f->reg_slots = (RVMVMRegSlot*)calloc((size_t)(num_reg_args > 0 ? num_reg_args : 1),
                                         sizeof(RVMVMRegSlot));
    if (f->code == NULL || f->arg_values == NULL || f->arg_codes == NULL || f->arg_py == NULL ||
        f->reg_slots == NULL) {
      PyErr_NoMemory();
      rc = -1;
    } else {
      f->num_arg_slots = num_args;
    }
  }
  if (rc == 0) rc = fill_code(vm, f, &r);
  free(words);
  return rc;
}

static void free_function(RVMVMFunc* f) {
  if (f->arg_py != NULL) {
    for (int64_t k = 0; k < f->num_arg_slots; ++k) Py_XDECREF(f->arg_py[k]);
  }
  free(f->code);
  free(f->arg_values);
  free(f->arg_codes);
  free(f->arg_py);
  free(f->reg_slots);
  free(f->name);
}

void rvm_vm_free(RVMVirtualMachine* vm) {
  for (size_t i = 0; i < vm->reg_top; ++i) RVMValueRelease(vm->reg_values[i], vm->reg_codes[i]);
  free(vm->reg_values);
  free(vm->reg_codes);
  free(vm->frames);
  vm->reg_values = NULL;
  vm->reg_codes = NULL;
  vm->frames = NULL;
  vm->reg_top = vm->reg_cap = vm->frame_top = vm->frame_cap = 0;
  if (vm->funcs != NULL) {
    for (int32_t i = 0; i < vm->num_funcs; ++i) {
      free_function(&vm->funcs[i]);
    }
    free(vm->funcs);
    vm->funcs = NULL;
  }
  if (vm->pool != NULL) {
    for (int32_t i = 0; i < vm->num_funcs; ++i) {
      if (vm->pool[i].box != NULL) RVMObjectFree(vm->pool[i].box);
      Py_XDECREF(vm->pool[i].py);
      Py_XDECREF(vm->pool[i].packed);
    }
    free(vm->pool);
    vm->pool = NULL;
  }
  if (vm->const_values != NULL) {
    for (int32_t i = 0; i < vm->num_consts; ++i)
      RVMValueRelease(vm->const_values[i], vm->const_codes[i]);
    free(vm->const_values);
    free(vm->const_codes);
    free(vm->const_bytes);
    vm->const_bytes = NULL;
    vm->const_values = NULL;
  }
  if (vm->pools != NULL) {
    for (int32_t d = 0; d < vm->num_devices; ++d) rvm_vm_pool_free(&vm->pools[d]);
    free(vm->pools);
    vm->pools = NULL;
  }
  Py_CLEAR(vm->const_list);
  Py_CLEAR(vm->vm);
  Py_CLEAR(vm->describe);
  Py_CLEAR(vm->truth);
  Py_CLEAR(vm->to_runtime);
  Py_CLEAR(vm->check_args);
  Py_CLEAR(vm->fallback);
  Py_CLEAR(vm->numpy_types);
  Py_CLEAR(vm->closure_type);
}
