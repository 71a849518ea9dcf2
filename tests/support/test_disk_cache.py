"""DiskCache: content-addressed files with atomic writes."""
import pytest

from rvm.support.disk_cache import DiskCache, cache_key


def test_put_get_roundtrip(tmp_path):
    cache = DiskCache(tmp_path, "ns")
    key = cache_key("a", 1)
    assert cache.get(key, ".bin") is None
    path = cache.put(key, ".bin", b"data")
    assert cache.get(key, ".bin") == path and path.read_bytes() == b"data"
    assert cache.get(key, ".other") is None
    assert not [p for p in path.parent.iterdir() if p.name.startswith(".tmp-")]


def test_keys_are_unambiguous():
    assert cache_key("ab", "c") != cache_key("a", "bc")
    assert cache_key("x") == cache_key("x")
    assert cache_key(b"x") == cache_key("x")
    assert cache_key(1) != cache_key("1 ")


def test_put_file_moves_scratch_file(tmp_path):
    cache = DiskCache(tmp_path, "ns")
    scratch = cache.scratch_dir()
    made = scratch / "out.so"
    made.write_bytes(b"\x7fELF")
    key = cache_key("lib")
    path = cache.put_file(key, ".so", made)
    assert not made.exists() and path.read_bytes() == b"\x7fELF"


def test_rejects_non_digest_keys(tmp_path):
    with pytest.raises(ValueError, match="hex digest"):
        DiskCache(tmp_path, "ns").path("../evil", ".so")
