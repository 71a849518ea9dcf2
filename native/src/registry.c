/* The global function table: one name -> function map for C and Python alike. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "runtime_internal.h"

typedef struct Entry {
  char* name;
  RVMObject* func;
  struct Entry* next;
} Entry;

#define NUM_BUCKETS 1024

static Entry* buckets[NUM_BUCKETS];
static size_t num_entries = 0;
static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;

static char* load_errors = NULL;
static pthread_mutex_t load_errors_lock = PTHREAD_MUTEX_INITIALIZER;

static uint64_t hash_name(const char* s) {
  uint64_t h = 1469598103934665603ULL; /* FNV-1a */
  for (; *s; ++s) {
    h ^= (unsigned char)*s;
    h *= 1099511628211ULL;
  }
  return h;
}

static Entry** find_slot(const char* name) {
  Entry** slot = &buckets[hash_name(name) % NUM_BUCKETS];
  while (*slot != NULL && strcmp((*slot)->name, name) != 0) slot = &(*slot)->next;
  return slot;
}

int RVMFuncRegisterGlobal(const char* name, RVMFunctionHandle f, int override) {
  if (name == NULL || f == NULL || f->type_index != kRVMObjectFunction) {
    rvm_set_error("TypeError: RVMFuncRegisterGlobal needs a name and a function handle");
    return -1;
  }
  pthread_mutex_lock(&registry_lock);
  Entry** slot = find_slot(name);
  if (*slot != NULL) {
    if (!override) {
      pthread_mutex_unlock(&registry_lock);
      rvm_set_error("ValueError: global function '%s' is already registered; "
                    "pass override=True to replace it", name);
      return -1;
    }
    RVMObject* old = (*slot)->func;
    RVMObjectRetain(f);
    (*slot)->func = f;
    pthread_mutex_unlock(&registry_lock);
    RVMObjectFree(old);
    return 0;
  }
  Entry* e = (Entry*)malloc(sizeof(Entry));
  size_t len = strlen(name);
  char* copy = (char*)malloc(len + 1);
  if (e == NULL || copy == NULL) {
    pthread_mutex_unlock(&registry_lock);
    free(e);
    free(copy);
    rvm_set_error("MemoryError: cannot register '%s'", name);
    return -1;
  }
  memcpy(copy, name, len + 1);
  RVMObjectRetain(f);
  e->name = copy;
  e->func = f;
  e->next = NULL;
  *slot = e;
  num_entries++;
  pthread_mutex_unlock(&registry_lock);
  return 0;
}

int RVMFuncGetGlobal(const char* name, RVMFunctionHandle* out) {
  pthread_mutex_lock(&registry_lock);
  Entry* e = *find_slot(name);
  *out = NULL;
  if (e != NULL) {
    RVMObjectRetain(e->func);
    *out = e->func;
  }
  pthread_mutex_unlock(&registry_lock);
  return 0;
}

int RVMFuncRemoveGlobal(const char* name) {
  pthread_mutex_lock(&registry_lock);
  Entry** slot = find_slot(name);
  Entry* e = *slot;
  if (e == NULL) {
    pthread_mutex_unlock(&registry_lock);
    rvm_set_error("ValueError: no global function named '%s' to remove", name);
    return -1;
  }
  *slot = e->next;
  num_entries--;
  pthread_mutex_unlock(&registry_lock);
  RVMObjectFree(e->func);
  free(e->name);
  free(e);
  return 0;
}

static __thread char** listed_names = NULL;
static __thread size_t num_listed = 0;

int RVMFuncListGlobalNames(int* out_size, const char*** out_names) {
  for (size_t i = 0; i < num_listed; ++i) free(listed_names[i]);
  free(listed_names);
  listed_names = NULL;
  num_listed = 0;
  pthread_mutex_lock(&registry_lock);
  char** names = (char**)malloc(sizeof(char*) * (num_entries + 1));
  if (names == NULL) {
    pthread_mutex_unlock(&registry_lock);
    rvm_set_error("MemoryError: cannot list global functions");
    return -1;
  }
  size_t n = 0;
  for (size_t b = 0; b < NUM_BUCKETS; ++b) {
    for (Entry* e = buckets[b]; e != NULL; e = e->next) {
      size_t len = strlen(e->name);
      char* copy = (char*)malloc(len + 1);
      if (copy == NULL) continue;
      memcpy(copy, e->name, len + 1);
      names[n++] = copy;
    }
  }
  pthread_mutex_unlock(&registry_lock);
  listed_names = names;
  num_listed = n;
  *out_size = (int)n;
  *out_names = (const char**)names;
  return 0;
}

static void append_load_error(const char* msg) {
  pthread_mutex_lock(&load_errors_lock);
  size_t old_len = load_errors != NULL ? strlen(load_errors) : 0;
  size_t add = strlen(msg);
  char* grown = (char*)realloc(load_errors, old_len + add + 2);
  if (grown != NULL) {
    if (old_len > 0) grown[old_len++] = '\n';
    memcpy(grown + old_len, msg, add + 1);
    load_errors = grown;
  }
  pthread_mutex_unlock(&load_errors_lock);
}

void RVMFuncRegisterGlobalAtLoad(const char* name, RVMPackedCFunc func) {
  RVMFunctionHandle f;
  if (RVMFuncCreateFromCFunc(func, NULL, NULL, &f) != 0) {
    append_load_error(RVMGetLastError());
    return;
  }
  if (RVMFuncRegisterGlobal(name, f, 0) != 0) append_load_error(RVMGetLastError());
  RVMFuncFree(f);
}

char* rvm_take_load_errors(void) {
  pthread_mutex_lock(&load_errors_lock);
  char* errors = load_errors;
  load_errors = NULL;
  pthread_mutex_unlock(&load_errors_lock);
  return errors;
}
