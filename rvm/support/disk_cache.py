"""A content-addressed cache of files on disk (compiled kernels, probe results).

Entries are keyed by a hash of everything that determines their content; the
caller chooses the parts (source, flags, compiler version, format version).
Writes are atomic (a temporary file renamed into place), so concurrent
processes sharing a cache directory never see a half-written entry.

>>> import tempfile
>>> cache = DiskCache(tempfile.mkdtemp(), "demo")
>>> key = cache_key("int x;", "-O3", 1)
>>> cache.get(key, ".txt") is None
True
>>> path = cache.put(key, ".txt", b"hello")
>>> cache.get(key, ".txt").read_bytes()
b'hello'
"""
import hashlib
import os
import pathlib
import tempfile


def cache_key(*parts):
    """A hex digest of ``parts`` (str, bytes or anything with a stable ``repr``)."""
    digest = hashlib.sha256()
    for part in parts:
        if isinstance(part, str):
            data = part.encode("utf-8")
        elif isinstance(part, (bytes, bytearray)):
            data = bytes(part)
        else:
            data = repr(part).encode("utf-8")
        # Length-prefixed, so ("ab", "c") and ("a", "bc") differ.
        digest.update(len(data).to_bytes(8, "little"))
        digest.update(data)
    return digest.hexdigest()


class DiskCache:
    """Files under ``root/namespace``, one per (key, suffix).

    ``root`` is created on first write. Keys are hex digests from ``cache_key``.
    """

    def __init__(self, root, namespace):
        self.root = pathlib.Path(root) / namespace

    def path(self, key, suffix):
        """Where the entry (key, suffix) lives, whether or not it exists."""
        if not key or any(c not in "0123456789abcdef" for c in key):
            raise ValueError(f"cache key must be a lowercase hex digest, got {key!r}")
        return self.root / key[:2] / f"{key}{suffix}"

    def get(self, key, suffix):
        """The path of the entry, or None when it is absent."""
        path = self.path(key, suffix)
        return path if path.is_file() else None

    def put(self, key, suffix, data):
        """Stores ``data`` (bytes) atomically and returns the entry's path."""
        path = self.path(key, suffix)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=suffix)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.replace(tmp, path)
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise
        return path

    def put_file(self, key, suffix, source_path):
        """Moves the file ``source_path`` into the cache as the entry; returns its path.

        ``source_path`` should be on the same file system (a scratch file made
        with ``scratch_dir``) so the move is an atomic rename.
        """
        path = self.path(key, suffix)
        path.parent.mkdir(parents=True, exist_ok=True)
        os.replace(source_path, path)
        return path

    def scratch_dir(self):
        """A new private temporary directory inside the cache (the caller removes it)."""
        self.root.mkdir(parents=True, exist_ok=True)
        return pathlib.Path(tempfile.mkdtemp(dir=self.root, prefix=".scratch-"))
