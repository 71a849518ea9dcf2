/* Internal structures of the rvm native runtime, shared by its sources. */
#ifndef RVM_RUNTIME_INTERNAL_H_
#define RVM_RUNTIME_INTERNAL_H_

#include <stdarg.h>

#include "rvm/c_runtime_api.h"

/* A packed function object: a C entry point plus the resource it closes over. */
typedef struct RVMFunctionObj {
  RVMObject header;
  RVMPackedCFunc func;
  void* resource;
  RVMResourceFinalizer finalizer;
  int releases_gil; /* a compiled kernel: Python calls run it without the GIL */
} RVMFunctionObj;

/* Formats into the thread-local last error. */
void rvm_set_error(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
/* A counter bumped by every RVMAPISetLastError on this thread; lets the Python
 * bridge tell whether the error it stashed is still the current one. */
uint64_t rvm_error_generation(void);

void rvm_object_init(RVMObject* obj, uint32_t type_index, void (*deleter)(RVMObject*));
int rvm_is_object_code(int type_code);

/* Errors of RVM_REGISTER_GLOBAL registrations since the last call; NULL when none.
 * The caller frees the string. */
char* rvm_take_load_errors(void);

void* rvm_aligned_alloc(size_t nbytes);

/* The number of CPUs this process may run on (its affinity mask), at least 1. */
int rvm_machine_threads(void);
#define RVM_ALLOC_ALIGNMENT 64

#endif /* RVM_RUNTIME_INTERNAL_H_ */
