/* The native engine's storage allocators: pooled (storages kept and handed out
 * again once only the pool holds them) and naive (a new storage per request),
 * with the same counters and size rounding as rvm.vm.allocator. */
#include <stdlib.h>
#include <string.h>

#include "vm_engine.h"

#define POOL_SCAN 8 /* storages inspected per request, as PooledAllocator.SCAN */

static void delete_storage(RVMObject* obj) {
  RVMVMStorage* s = (RVMVMStorage*)obj;
  free(s->data);
  free(s);
}

int rvm_vm_is_storage(RVMValue v, int code) {
  if (code != kRVMObjectHandle || v.v_handle == NULL) return 0;
  RVMObject* obj = (RVMObject*)v.v_handle;
  return obj->type_index == kRVMObjectStorage && obj->deleter == delete_storage;
}

int rvm_vm_pool_init(RVMVMStoragePool* pool, int naive, DLDevice device) {
  memset(pool, 0, sizeof(*pool));
  pool->naive = naive;
  pool->device = device;
  return 0;
}

void rvm_vm_pool_free(RVMVMStoragePool* pool) {
  for (int32_t c = 0; c < pool->num_classes; ++c) {
    RVMVMSizeClass* cls = &pool->classes[c];
    for (int32_t i = 0; i < cls->count; ++i) RVMObjectFree(&cls->items[i]->header);
    free(cls->items);
  }
  free(pool->classes);
  pool->classes = NULL;
  pool->num_classes = pool->cap = 0;
}

static RVMVMStorage* new_storage(RVMVMStoragePool* pool, int64_t nbytes) {
  RVMVMStorage* s = (RVMVMStorage*)malloc(sizeof(RVMVMStorage));
  void* data = s != NULL ? rvm_aligned_alloc((size_t)nbytes) : NULL;
  if (data == NULL) {
    free(s);
    PyErr_Format(PyExc_MemoryError, "alloc_storage: cannot allocate %lld bytes",
                 (long long)nbytes);
    return NULL;
  }
  rvm_object_init(&s->header, kRVMObjectStorage, delete_storage);
  s->data = data;
  s->nbytes = nbytes;
  s->device = pool->device;
  pool->allocations++;
  pool->bytes_allocated += nbytes;
  return s;
}

static RVMVMSizeClass* size_class(RVMVMStoragePool* pool, int64_t size) {
  for (int32_t c = 0; c < pool->num_classes; ++c) {
    if (pool->classes[c].size == size) return &pool->classes[c];
  }
  if (pool->num_classes == pool->cap) {
    int32_t cap = pool->cap ? pool->cap * 2 : 8;
    RVMVMSizeClass* grown =
        (RVMVMSizeClass*)realloc(pool->classes, sizeof(RVMVMSizeClass) * (size_t)cap);
    if (grown == NULL) {
      PyErr_NoMemory();
      return NULL;
    }
    pool->classes = grown;
    pool->cap = cap;
  }
  RVMVMSizeClass* cls = &pool->classes[pool->num_classes++];
  memset(cls, 0, sizeof(*cls));
  cls->size = size;
  return cls;
}

RVMVMStorage* rvm_vm_pool_alloc(RVMVMStoragePool* pool, int64_t nbytes) {
  pool->requests++;
  if (pool->naive) return new_storage(pool, nbytes);
  int64_t size = (nbytes + 63) / 64 * 64;
  if (size < 64) size = 64;
  RVMVMSizeClass* cls = size_class(pool, size);
  if (cls == NULL) return NULL;
  int32_t count = cls->count;
  if (count > 0) {
    int32_t start = cls->cursor;
    int32_t steps = count < POOL_SCAN ? count : POOL_SCAN;
    for (int32_t step = 0; step < steps; ++step) {
      int32_t index = (start + step) % count;
      RVMVMStorage* s = cls->items[index];
      if (__atomic_load_n(&s->header.ref_count, __ATOMIC_ACQUIRE) == 1) {
        cls->cursor = index;
        RVMObjectRetain(&s->header);
        return s;
      }
    }
    cls->cursor = (start + POOL_SCAN) % count;
  }
  if (cls->count == cls->cap) {
    int32_t cap = cls->cap ? cls->cap * 2 : 4;
    RVMVMStorage** grown = (RVMVMStorage**)realloc(cls->items, sizeof(RVMVMStorage*) * (size_t)cap);
    if (grown == NULL) {
      PyErr_NoMemory();
      return NULL;
    }
    cls->items = grown;
    cls->cap = cap;
  }
  RVMVMStorage* s = new_storage(pool, size);
  if (s == NULL) return NULL;
  cls->items[cls->count++] = s; /* the pool's reference */
  RVMObjectRetain(&s->header);  /* the caller's */
  return s;
}
