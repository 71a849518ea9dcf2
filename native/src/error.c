/* Thread-local last error, set by failing packed functions. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime_internal.h"

static __thread char* last_error = NULL;
static __thread uint64_t error_generation = 0;

void RVMAPISetLastError(const char* msg) {
  size_t n = strlen(msg);
  char* copy = (char*)malloc(n + 1);
  if (copy == NULL) return;
  memcpy(copy, msg, n + 1);
  free(last_error);
  last_error = copy;
  error_generation++;
}

const char* RVMGetLastError(void) { return last_error != NULL ? last_error : ""; }

uint64_t rvm_error_generation(void) { return error_generation; }

void rvm_set_error(const char* fmt, ...) {
  char buf[2048];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof(buf), fmt, ap);
  va_end(ap);
  RVMAPISetLastError(buf);
}
