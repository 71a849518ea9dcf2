/* Tensors: aligned allocation, views, and DLPack import/export. */
#include <stdlib.h>
#include <string.h>

#include "runtime_internal.h"

void* rvm_aligned_alloc(size_t nbytes) {
  void* ptr = NULL;
  /* Round up so that zero-size tensors still get a distinct, valid pointer. */
  size_t size = (nbytes + RVM_ALLOC_ALIGNMENT - 1) / RVM_ALLOC_ALIGNMENT * RVM_ALLOC_ALIGNMENT;
  if (size == 0) size = RVM_ALLOC_ALIGNMENT;
  if (posix_memalign(&ptr, RVM_ALLOC_ALIGNMENT, size) != 0) return NULL;
  return ptr;
}

int64_t RVMDataSize(const int64_t* shape, int ndim, DLDataType dtype) {
  int64_t bytes = ((int64_t)dtype.bits * dtype.lanes + 7) / 8;
  for (int i = 0; i < ndim; ++i) {
    if (shape[i] < 0 || __builtin_mul_overflow(bytes, shape[i], &bytes)) return -1;
  }
  return bytes;
}

/* Whether [data, data + nbytes) lies inside the memory of tensor owner. */
static int inside_tensor(const RVMNDArray* owner, const char* data, int64_t nbytes) {
  int64_t owned = RVMDataSize(owner->dl.shape, owner->dl.ndim, owner->dl.dtype);
  const char* start = (const char*)owner->dl.data + owner->dl.byte_offset;
  if (owned < 0 || data < start) return 0;
  return (uint64_t)(data - start) <= (uint64_t)owned &&
         nbytes <= owned - (int64_t)(data - start);
}

static void delete_ndarray(RVMObject* obj) {
  RVMNDArray* arr = (RVMNDArray*)obj;
  if (arr->owner != NULL) {
    RVMObjectFree(arr->owner);
  } else {
    free(arr->dl.data);
  }
  free(arr);
}

static int check_shape(const int64_t* shape, int ndim) {
  if (ndim < 0) {
    rvm_set_error("ValueError: a tensor needs ndim >= 0, got %d", ndim);
    return -1;
  }
  for (int i = 0; i < ndim; ++i) {
    if (shape[i] < 0) {
      rvm_set_error("ValueError: tensor dimension %d is negative (%lld)", i, (long long)shape[i]);
      return -1;
    }
  }
  return 0;
}

static RVMNDArray* new_header(const int64_t* shape, int ndim, DLDataType dtype, DLDevice device) {
  RVMNDArray* arr = (RVMNDArray*)malloc(sizeof(RVMNDArray) + sizeof(int64_t) * (size_t)ndim);
  if (arr == NULL) return NULL;
  rvm_object_init(&arr->header, kRVMObjectNDArray, delete_ndarray);
  if (ndim > 0) memcpy(arr->shape_data, shape, sizeof(int64_t) * (size_t)ndim);
  arr->dl.data = NULL;
  arr->dl.device = device;
  arr->dl.ndim = ndim;
  arr->dl.dtype = dtype;
  arr->dl.shape = arr->shape_data;
  arr->dl.strides = NULL;
  arr->dl.byte_offset = 0;
  arr->owner = NULL;
  arr->py_object = NULL;
  return arr;
}

int RVMArrayAlloc(const int64_t* shape, int ndim, DLDataType dtype, DLDevice device,
                  RVMNDArray** out) {
  if (check_shape(shape, ndim) != 0) return -1;
  if (device.device_type != kDLCPU) {
    rvm_set_error("ValueError: cannot allocate on device type %d; only cpu (1) is supported",
                  device.device_type);
    return -1;
  }
  int64_t nbytes = RVMDataSize(shape, ndim, dtype);
  if (nbytes < 0) {
    rvm_set_error("ValueError: cannot allocate a tensor of %d dimensions whose byte size "
                  "overflows int64", ndim);
    return -1;
  }
  RVMNDArray* arr = new_header(shape, ndim, dtype, device);
  void* data = arr != NULL ? rvm_aligned_alloc((size_t)nbytes) : NULL;
  if (data == NULL) {
    free(arr);
    rvm_set_error("MemoryError: cannot allocate %lld bytes for a tensor", (long long)nbytes);
    return -1;
  }
  arr->dl.data = data;
  *out = arr;
  return 0;
}

int RVMNDArrayCreateView(RVMObject* owner, void* data, const int64_t* shape, int ndim,
                         DLDataType dtype, DLDevice device, RVMNDArray** out) {
  if (check_shape(shape, ndim) != 0) return -1;
  int64_t nbytes = RVMDataSize(shape, ndim, dtype);
  if (nbytes < 0) {
    rvm_set_error("ValueError: a view of %d dimensions whose byte size overflows int64", ndim);
    return -1;
  }
  /* A view of a tensor (reshape, NDArray.view, a tensor imported over another) never
   * reaches past the bytes that tensor owns. */
  if (owner != NULL && owner->type_index == kRVMObjectNDArray &&
      !inside_tensor((const RVMNDArray*)owner, (const char*)data, nbytes)) {
    rvm_set_error("ValueError: a view of %lld bytes does not fit in the memory of the tensor "
                  "it views (%lld bytes)", (long long)nbytes,
                  (long long)RVMDataSize(((RVMNDArray*)owner)->dl.shape,
                                         ((RVMNDArray*)owner)->dl.ndim,
                                         ((RVMNDArray*)owner)->dl.dtype));
    return -1;
  }
  RVMNDArray* arr = new_header(shape, ndim, dtype, device);
  if (arr == NULL) {
    rvm_set_error("MemoryError: cannot allocate a tensor header");
    return -1;
  }
  arr->dl.data = data;
  arr->owner = owner;
  if (owner != NULL) {
    RVMObjectRetain(owner);
  }
  *out = arr;
  return 0;
}

/* ---- DLPack import ---- */

/* Keeps an imported tensor alive; calls its producer's deleter at the end. */
typedef struct {
  RVMObject header;
  void* managed;
  int versioned;
} DLPackOwner;

static void delete_dlpack_owner(RVMObject* obj) {
  DLPackOwner* owner = (DLPackOwner*)obj;
  if (owner->versioned) {
    DLManagedTensorVersioned* m = (DLManagedTensorVersioned*)owner->managed;
    if (m->deleter != NULL) m->deleter(m);
  } else {
    DLManagedTensor* m = (DLManagedTensor*)owner->managed;
    if (m->deleter != NULL) m->deleter(m);
  }
  free(owner);
}

/* Whether t's elements lie in row-major order with no gaps. A tensor without elements
 * has no layout: its strides are whatever its producer computed (numpy gives 0s). */
static int is_compact(const DLTensor* t) {
  if (t->strides == NULL) return 1;
  for (int i = 0; i < t->ndim; ++i)
    if (t->shape[i] == 0) return 1;
  int64_t expected = 1;
  for (int i = t->ndim - 1; i >= 0; --i) {
    if (t->shape[i] != 1 && t->strides[i] != expected) return 0;
    expected *= t->shape[i];
  }
  return 1;
}

static int check_importable(const DLTensor* t) {
  if (t->device.device_type != kDLCPU && t->device.device_type != kDLCUDAHost) {
    rvm_set_error("ValueError: from_dlpack: expected a cpu tensor, got device type %d",
                  t->device.device_type);
    return -1;
  }
  if (!is_compact(t)) {
    rvm_set_error("ValueError: from_dlpack: expected a C-contiguous tensor, got a strided view;"
                  " make it contiguous first (numpy: np.ascontiguousarray, torch: .contiguous())");
    return -1;
  }
  return 0;
}

static int import_tensor(const DLTensor* t, void* managed, int versioned, RVMNDArray** out) {
  DLPackOwner* owner = (DLPackOwner*)malloc(sizeof(DLPackOwner));
  if (owner == NULL) {
    rvm_set_error("MemoryError: cannot allocate a DLPack owner");
    return -1;
  }
  rvm_object_init(&owner->header, kRVMObjectDLPack, delete_dlpack_owner);
  owner->managed = managed;
  owner->versioned = versioned;
  DLDevice cpu = {kDLCPU, 0};
  int rc = check_importable(t);
  if (rc == 0) {
    rc = RVMNDArrayCreateView(&owner->header, (char*)t->data + t->byte_offset, t->shape, t->ndim,
                              t->dtype, cpu, out);
  }
  /* The view holds the owner now; drop the creation reference. On failure this
   * hands the tensor back to its producer's deleter. */
  RVMObjectFree(&owner->header);
  return rc;
}

int RVMNDArrayFromDLPack(DLManagedTensor* managed, RVMNDArray** out) {
  return import_tensor(&managed->dl_tensor, managed, 0, out);
}

int RVMNDArrayFromDLPackVersioned(DLManagedTensorVersioned* managed, RVMNDArray** out) {
  if (managed->version.major > DLPACK_MAJOR_VERSION) {
    rvm_set_error("ValueError: from_dlpack: DLPack version %u.%u is newer than the supported %d.%d",
                  managed->version.major, managed->version.minor, DLPACK_MAJOR_VERSION,
                  DLPACK_MINOR_VERSION);
    if (managed->deleter != NULL) managed->deleter(managed);
    return -1;
  }
  if (managed->flags & DLPACK_FLAG_BITMASK_READ_ONLY) {
    rvm_set_error("ValueError: from_dlpack: the tensor is read-only and cannot be shared;"
                  " pass a writeable copy");
    if (managed->deleter != NULL) managed->deleter(managed);
    return -1;
  }
  return import_tensor(&managed->dl_tensor, managed, 1, out);
}

/* ---- DLPack export ---- */

static void delete_exported(DLManagedTensor* self) {
  RVMObjectFree((RVMObject*)self->manager_ctx);
  free(self);
}

int RVMNDArrayToDLPack(RVMNDArray* arr, DLManagedTensor** out) {
  DLManagedTensor* managed = (DLManagedTensor*)malloc(sizeof(DLManagedTensor));
  if (managed == NULL) {
    rvm_set_error("MemoryError: cannot allocate a DLPack tensor");
    return -1;
  }
  managed->dl_tensor = arr->dl;
  managed->manager_ctx = arr;
  managed->deleter = delete_exported;
  RVMObjectRetain(&arr->header);
  *out = managed;
  return 0;
}

static void delete_exported_versioned(DLManagedTensorVersioned* self) {
  RVMObjectFree((RVMObject*)self->manager_ctx);
  free(self);
}

int RVMNDArrayToDLPackVersioned(RVMNDArray* arr, DLManagedTensorVersioned** out) {
  DLManagedTensorVersioned* managed =
      (DLManagedTensorVersioned*)malloc(sizeof(DLManagedTensorVersioned));
  if (managed == NULL) {
    rvm_set_error("MemoryError: cannot allocate a DLPack tensor");
    return -1;
  }
  managed->version.major = DLPACK_MAJOR_VERSION;
  managed->version.minor = DLPACK_MINOR_VERSION;
  managed->manager_ctx = arr;
  managed->deleter = delete_exported_versioned;
  managed->flags = 0;
  managed->dl_tensor = arr->dl;
  RVMObjectRetain(&arr->header);
  *out = managed;
  return 0;
}
