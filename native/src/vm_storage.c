/* The VM's one allocator: a VM state object (what C builtins receive as their vm
 * argument) holding a storage pool per device. Pooled: storages are kept and
 * handed out again once only the pool holds them (rounded to 64 bytes, at most
 * POOL_SCAN inspected per request); naive: a new storage per request.
 *
 * The memory limit bounds the bytes the pools hold at once: every pooled storage
 * (kept until the state dies) and every naive storage still alive (each holds
 * its state, whose count it decrements when it dies). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "vm_engine.h"

#define POOL_SCAN 8

static void delete_storage(RVMObject* obj) {
  RVMVMStorage* s = (RVMVMStorage*)obj;
  if (s->owner != NULL) {
    __atomic_sub_fetch(&s->owner->in_use, s->nbytes, __ATOMIC_RELAXED);
    RVMObjectFree(&s->owner->header);
  }
  free(s->data);
  free(s);
}

RVMVMStorage* rvm_vm_storage_of(RVMValue v, int code) {
  if (code != kRVMObjectHandle || v.v_handle == NULL) return NULL;
  RVMObject* obj = (RVMObject*)v.v_handle;
  if (obj->type_index != kRVMObjectStorage || obj->deleter != delete_storage) return NULL;
  return (RVMVMStorage*)obj;
}

static void free_pool(RVMVMStoragePool* pool) {
  for (int32_t c = 0; c < pool->num_classes; ++c) {
    RVMVMSizeClass* cls = &pool->classes[c];
    for (int32_t i = 0; i < cls->count; ++i) RVMObjectFree(&cls->items[i]->header);
    free(cls->items);
  }
  free(pool->classes);
}

static void delete_state(RVMObject* obj) {
  RVMVMState* state = (RVMVMState*)obj;
  for (int32_t d = 0; d < state->num_devices; ++d) free_pool(&state->pools[d]);
  free(state);
}

RVMVMState* rvm_vm_state_new(int32_t num_devices, int naive, int64_t memory_limit) {
  if (num_devices < 1) {
    rvm_set_error("ValueError: a VM needs at least one device, got %d", (int)num_devices);
    return NULL;
  }
  if (memory_limit < 0) {
    rvm_set_error("ValueError: memory_limit must be a positive number of bytes, got %lld",
                  (long long)memory_limit);
    return NULL;
  }
  RVMVMState* state = (RVMVMState*)calloc(
      1, sizeof(RVMVMState) + sizeof(RVMVMStoragePool) * (size_t)num_devices);
  if (state == NULL) {
    rvm_set_error("MemoryError: cannot allocate a VM state");
    return NULL;
  }
  rvm_object_init(&state->header, kRVMObjectVMState, delete_state);
  state->num_devices = num_devices;
  state->memory_limit = memory_limit;
  state->kernels.budget = state;
  state->kernels.polls_left = INT64_MAX;
  for (int32_t d = 0; d < num_devices; ++d) {
    state->pools[d].naive = naive;
    state->pools[d].state = state;
    state->pools[d].device.device_type = kDLCPU;
    state->pools[d].device.device_id = d;
  }
  return state;
}

RVMVMState* rvm_vm_state_of(RVMValue v, int code) {
  if (code != kRVMObjectHandle || v.v_handle == NULL) return NULL;
  RVMObject* obj = (RVMObject*)v.v_handle;
  return obj->type_index == kRVMObjectVMState && obj->deleter == delete_state ? (RVMVMState*)obj
                                                                              : NULL;
}

int rvm_vm_claim(RVMVMState* state, int64_t nbytes, const char* what) {
  int64_t in_use = __atomic_add_fetch(&state->in_use, nbytes, __ATOMIC_RELAXED);
  if (state->memory_limit == 0 || in_use <= state->memory_limit) return 0;
  __atomic_sub_fetch(&state->in_use, nbytes, __ATOMIC_RELAXED);
  rvm_set_error("MemoryError: %s: %lld more bytes would exceed the VM's "
                "memory_limit of %lld bytes (%lld in use)", what, (long long)nbytes,
                (long long)state->memory_limit, (long long)(in_use - nbytes));
  return -1;
}

static RVMVMStorage* new_storage(RVMVMStoragePool* pool, int64_t nbytes) {
  if (rvm_vm_claim(pool->state, nbytes, "alloc_storage") != 0) return NULL;
  RVMVMStorage* s = (RVMVMStorage*)malloc(sizeof(RVMVMStorage));
  void* data = s != NULL ? rvm_aligned_alloc((size_t)nbytes) : NULL;
  if (data == NULL) {
    free(s);
    __atomic_sub_fetch(&pool->state->in_use, nbytes, __ATOMIC_RELAXED);
    rvm_set_error("MemoryError: alloc_storage: cannot allocate %lld bytes", (long long)nbytes);
    return NULL;
  }
  rvm_object_init(&s->header, kRVMObjectStorage, delete_storage);
  s->data = data;
  s->nbytes = nbytes;
  s->device = pool->device;
  s->owner = NULL;
  if (pool->naive) { /* it may outlive the pool: it keeps the state that counts it */
    s->owner = pool->state;
    RVMObjectRetain(&pool->state->header);
  }
  pool->allocations++;
  pool->bytes_allocated += nbytes;
  return s;
}

/* Grows an array of n items of size each to hold one more; 0 on success. */
static int grow(void** items, int32_t* cap, int32_t n, size_t each) {
  if (n < *cap) return 0;
  int32_t bigger = *cap ? *cap * 2 : 8;
  void* grown = realloc(*items, each * (size_t)bigger);
  if (grown == NULL) {
    rvm_set_error("MemoryError: alloc_storage: cannot grow the storage pool");
    return -1;
  }
  *items = grown;
  *cap = bigger;
  return 0;
}

static RVMVMSizeClass* size_class(RVMVMStoragePool* pool, int64_t size) {
  for (int32_t c = 0; c < pool->num_classes; ++c) {
    if (pool->classes[c].size == size) return &pool->classes[c];
  }
  if (grow((void**)&pool->classes, &pool->cap, pool->num_classes, sizeof(RVMVMSizeClass)) != 0)
    return NULL;
  RVMVMSizeClass* cls = &pool->classes[pool->num_classes++];
  memset(cls, 0, sizeof(*cls));
  cls->size = size;
  return cls;
}

RVMVMStorage* rvm_vm_pool_alloc(RVMVMStoragePool* pool, int64_t nbytes) {
  pool->requests++;
  if (nbytes < 0 || nbytes > INT64_MAX - 64) {
    rvm_set_error("MemoryError: alloc_storage: cannot allocate %lld bytes", (long long)nbytes);
    return NULL;
  }
  if (pool->naive) return new_storage(pool, nbytes);
  int64_t size = nbytes <= 64 ? 64 : (nbytes + 63) / 64 * 64;
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
  if (grow((void**)&cls->items, &cls->cap, cls->count, sizeof(RVMVMStorage*)) != 0) return NULL;
  RVMVMStorage* s = new_storage(pool, size);
  if (s == NULL) return NULL;
  cls->items[cls->count++] = s; /* the pool's reference */
  RVMObjectRetain(&s->header);  /* the caller's */
  return s;
}
