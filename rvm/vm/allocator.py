"""Storage and the VM's allocators (pooled and naive), with allocation counters.

A Storage is a byte buffer that tensors are carved out of. Tensors made by
``Storage.alloc_tensor`` hold a Python reference to the storage's bytes, so
the pooled allocator can tell, from reference counts, when neither the
Storage nor any tensor inside it is alive any more and hand it out again.
"""
import math
import sys

import numpy as np

from rvm.runtime.data_type import DataType
from rvm.runtime.device import cpu
from rvm.runtime.ndarray import empty, from_dlpack

ALIGNMENT = 64


class Storage:
    """``nbytes`` bytes on ``device`` from which tensors are allocated."""

    __slots__ = ("buffer", "_bytes", "nbytes", "device", "pinned")

    def __init__(self, nbytes, device):
        self.buffer = empty((nbytes,), "uint8", device)
        self._bytes = np.asarray(memoryview(self.buffer))  # every tensor refers to this
        self.nbytes = nbytes
        self.device = device
        self.pinned = False  # True once a tensor escaped the reference tracking

    def alloc_tensor(self, offset, shape, dtype):
        """A tensor of ``shape``/``dtype`` at byte ``offset``; ValueError if it does not fit."""
        dtype = DataType(dtype)
        shape = tuple(int(d) for d in shape)
        if any(d < 0 for d in shape):
            raise ValueError(f"alloc_tensor: negative dimension in shape {shape}")
        nbytes = math.prod(shape) * dtype.itemsize
        if offset < 0 or offset + nbytes > self.nbytes:
            raise ValueError(f"alloc_tensor: {dtype}{list(shape)} ({nbytes} bytes) at offset "
                             f"{offset} does not fit in a storage of {self.nbytes} bytes")
        if dtype.lanes == 1 and not dtype.is_handle:
            view = self._bytes[offset:offset + nbytes].view(dtype.numpy_dtype).reshape(shape)
            return from_dlpack(view)
        self.pinned = True
        return self.buffer.view(shape, dtype, offset)

    def __repr__(self):
        return f"<Storage {self.nbytes} bytes on {self.device}>"


def _reference_baseline():
    """Reference counts of a free pooled storage, as seen from the loop in ``alloc``."""
    pool = [Storage(ALIGNMENT, cpu(0))]
    for storage in pool:
        return sys.getrefcount(storage), sys.getrefcount(storage._bytes)


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
    """Keeps every buffer and hands a free one of the same rounded size out again."""

    kind = "pooled"
    _baseline = None

    def __init__(self, device):
        super().__init__(device)
        self._pools = {}
        if PooledAllocator._baseline is None:
            PooledAllocator._baseline = _reference_baseline()

    def alloc(self, nbytes):
        self.num_requests += 1
        size = max(ALIGNMENT, -(-nbytes // ALIGNMENT) * ALIGNMENT)
        pool = self._pools.get(size)
        if pool is None:
            pool = self._pools[size] = []
        free_storage, free_bytes = self._baseline
        for storage in pool:
            if (sys.getrefcount(storage) <= free_storage and not storage.pinned
                    and sys.getrefcount(storage._bytes) <= free_bytes):
                return storage
        storage = self._new(size)
        pool.append(storage)
        return storage

    def release_free(self):
        """Drops pooled buffers nothing refers to; returns how many were dropped."""
        dropped = 0
        free_storage, free_bytes = self._baseline
        for size, pool in self._pools.items():
            keep = []
            for storage in pool:
                if (sys.getrefcount(storage) <= free_storage and not storage.pinned
                        and sys.getrefcount(storage._bytes) <= free_bytes):
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
