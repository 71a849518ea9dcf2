"""Storage and the VM's allocators (pooled and naive), with allocation counters.

A Storage is a byte buffer that tensors are carved out of. Tensors made by
``Storage.alloc_tensor`` are views that hold a reference to the storage's
buffer in the runtime (as do views of them, numpy arrays over them and
exported DLPack tensors), so the pooled allocator can tell, from the buffer's
use count and the Storage's own reference count, when nothing inside a
storage is alive any more and hand it out again.
"""
import math
import sys

from rvm.runtime.data_type import DataType
from rvm.runtime.device import cpu
from rvm.runtime.ndarray import empty

ALIGNMENT = 64


class Storage:
    """``nbytes`` bytes on ``device`` from which tensors are allocated."""

    __slots__ = ("buffer", "nbytes", "device")

    def __init__(self, nbytes, device):
        self.buffer = empty((nbytes,), "uint8", device)
        self.nbytes = nbytes
        self.device = device

    def alloc_tensor(self, offset, shape, dtype):
        """A tensor of ``shape``/``dtype`` at byte ``offset``; ValueError if it does not fit."""
        try:
            return self.buffer.view(shape, dtype, offset)
        except ValueError:
            dtype = DataType(dtype)
            nbytes = math.prod(shape) * dtype.itemsize
            if min(shape, default=0) < 0:
                raise ValueError(f"alloc_tensor: negative dimension in shape {tuple(shape)}"
                                 ) from None
            raise ValueError(f"alloc_tensor: {dtype}{list(shape)} ({nbytes} bytes) at offset "
                             f"{offset} does not fit in a storage of {self.nbytes} bytes"
                             ) from None

    def __repr__(self):
        return f"<Storage {self.nbytes} bytes on {self.device}>"


def _reference_baseline():
    """Reference count of a free pooled storage, as seen from the loop in ``alloc``."""
    pool = [Storage(ALIGNMENT, cpu(0))]
    for storage in pool:
        return sys.getrefcount(storage)


class Allocator:
    """Base of the allocators: counts requests, new buffers and bytes."""

    kind = "base"

    def __init__(self, device):
        self.device = device
        self.num_requests = 0
        self.num_allocations = 0
        self.bytes_allocated = 0

    def _new(self, nbytes):
        self.num_allocations += 1
        self.bytes_allocated += nbytes
        return Storage(nbytes, self.device)

    def stats(self):
        """Counters: requests, new allocations, reuses and bytes allocated."""
        return {"kind": self.kind, "requests": self.num_requests,
                "allocations": self.num_allocations,
                "reuses": self.num_requests - self.num_allocations,
                "bytes_allocated": self.bytes_allocated}


class NaiveAllocator(Allocator):
    """A new buffer for every request."""

    kind = "naive"

    def alloc(self, nbytes):
        self.num_requests += 1
        return self._new(nbytes)


class PooledAllocator(Allocator):
    """Keeps every buffer and hands a free one of the same rounded size out again.

    Each request inspects at most ``SCAN`` buffers of its size, starting where
    the last search stopped, so a caller keeping many outputs alive does not
    make every request walk all of them.
    """

    kind = "pooled"
    SCAN = 8
    _baseline = None

    def __init__(self, device):
        super().__init__(device)
        self._pools = {}    # rounded size -> [Storage]
        self._cursors = {}  # rounded size -> where the next search starts
        if PooledAllocator._baseline is None:
            PooledAllocator._baseline = _reference_baseline()

    def alloc(self, nbytes):
        self.num_requests += 1
        size = max(ALIGNMENT, -(-nbytes // ALIGNMENT) * ALIGNMENT)
        pool = self._pools.get(size)
        if pool is None:
            pool = self._pools[size] = []
        count = len(pool)
        if count:
            free_storage = self._baseline
            start = self._cursors.get(size, 0)
            for step in range(min(count, self.SCAN)):
                index = (start + step) % count
                storage = pool[index]
                if sys.getrefcount(storage) <= free_storage and storage.buffer._use_count == 1:
                    self._cursors[size] = index
                    return storage
            self._cursors[size] = (start + self.SCAN) % count
        storage = self._new(size)
        pool.append(storage)
        return storage

    def release_free(self):
        """Drops pooled buffers nothing refers to; returns how many were dropped."""
        dropped = 0
        free_storage = self._baseline
        for size, pool in self._pools.items():
            keep = []
            for storage in pool:
                if sys.getrefcount(storage) <= free_storage and storage.buffer._use_count == 1:
                    dropped += 1
                else:
                    keep.append(storage)
            self._pools[size] = keep
        return dropped


ALLOCATORS = {"pooled": PooledAllocator, "naive": NaiveAllocator}


def make_allocator(memory_cfg, device):
    """The allocator named ``memory_cfg`` ("pooled" or "naive") for ``device``."""
    cls = ALLOCATORS.get(memory_cfg)
    if cls is None:
        raise ValueError(f"memory_cfg must be one of {sorted(ALLOCATORS)}, got {memory_cfg!r}")
    return cls(device)
