"""Structural equality and hashing of IR, up to renaming of variables.

Two values are structurally equal when they have the same node types and
equal ``_fields``, recursively, where variables (classes with
``_is_var = True``) are matched through one bijection built on first
encounter: ``x + 1`` equals ``y + 1`` if ``x`` and ``y`` are met at the same
place for the first time. GlobalVars are names and compare by name; dicts
keyed by GlobalVar (IRModule functions) compare by name regardless of order.
"""
import hashlib
import math
import struct

import numpy as np

from rvm.ir.expr import GlobalVar
from rvm.ir.node import Node

_MAX_SHOWN = 400


class _Mismatch(Exception):
    def __init__(self, path, lhs, rhs, reason):
        super().__init__(reason)
        self.path = path
        self.lhs = lhs
        self.rhs = rhs
        self.reason = reason


def _is_var(x):
    return isinstance(x, Node) and type(x)._is_var


def _as_array(x):
    """The numpy view of an array-like value (NDArray, numpy array), else None."""
    if isinstance(x, np.ndarray):
        return x
    if not isinstance(x, Node) and hasattr(x, "numpy") and hasattr(x, "shape"):
        return x.numpy()
    return None


def _key_text(key):
    if isinstance(key, GlobalVar):
        return repr(key.name_hint)
    if isinstance(key, Node):
        return getattr(key, "name_hint", None) or type(key).__name__
    return repr(key)


def _compared_fields(node):
    """The fields structural equality and hashing look at: ``_fields`` less the class's
    ``_equal_ignored`` ones (a block's name, as TVM ignores it)."""
    ignored = getattr(type(node), "_equal_ignored", ())
    return [name for name in node._fields if name not in ignored] if ignored else node._fields


def _binding_fields(node, declared):
    """The fields where ``node`` defines variables.

    A class with ``_declared_by_parent = True`` (tir.Buffer) defines its variables only
    where a parent declares it (a binding field of the parent), not where it is used.
    """
    if getattr(type(node), "_declared_by_parent", False) and not declared:
        return ()
    return getattr(type(node), "_binding_fields", ())


class _EqualChecker:
    """Compares two values, keeping the variable bijection; raises _Mismatch."""

    def __init__(self, map_free_vars):
        self.map_free_vars = map_free_vars
        self.lhs_to_rhs = {}
        self.rhs_to_lhs = {}
        self.proven = set()
        self.alive = []  # keeps compared objects alive so their ids stay unique

    def check(self, a, b, path, binding=False):
        if isinstance(a, Node) or isinstance(b, Node):
            self._check_node(a, b, path, binding)
        elif isinstance(a, (list, tuple)) or isinstance(b, (list, tuple)):
            self._check_sequence(a, b, path, binding)
        elif isinstance(a, dict) or isinstance(b, dict):
            self._check_dict(a, b, path, binding)
        else:
            self._check_leaf(a, b, path)

    def _check_node(self, a, b, path, binding):
        if type(a) is not type(b):
            raise _Mismatch(path, a, b,
                            f"node type differs: {type(a).__name__} vs {type(b).__name__}")
        if _is_var(a):
            self._check_var(a, b, path, binding)
            return
        key = (id(a), id(b))
        if key in self.proven:
            return
        binding_fields = _binding_fields(a, binding)
        for name in _compared_fields(a):
            self.check(getattr(a, name), getattr(b, name), f"{path}.{name}",
                       binding=name in binding_fields)
        self.proven.add(key)
        self.alive.append((a, b))

    def _check_var(self, a, b, path, binding):
        mapped = self.lhs_to_rhs.get(id(a))
        back = self.rhs_to_lhs.get(id(b))
        if mapped is not None or back is not None:
            if mapped is b and back is a:
                return
            if mapped is not None:
                raise _Mismatch(path, a, b, f"variable {a.name_hint!r} was matched with "
                                f"{mapped.name_hint!r} earlier, here it meets {b.name_hint!r}")
            raise _Mismatch(path, a, b, f"variable {b.name_hint!r} (rhs) was matched with "
                            f"{back.name_hint!r} earlier, here it meets {a.name_hint!r}")
        if not self.map_free_vars and not binding and a is not b:
            raise _Mismatch(path, a, b, f"free variables {a.name_hint!r} and {b.name_hint!r} "
                            "are different objects (map_free_vars=False)")
        # A variable's defining site also defines the variables its fields mention (the
        # symbolic dimensions in a Relax parameter's struct info).
        outer = self.map_free_vars
        self.map_free_vars = outer or binding
        try:
            for name in a._fields:
                self.check(getattr(a, name), getattr(b, name), f"{path}.{name}")
        finally:
            self.map_free_vars = outer
        self.lhs_to_rhs[id(a)] = b
        self.rhs_to_lhs[id(b)] = a
        self.alive.append((a, b))

    def _check_sequence(self, a, b, path, binding):
        if not isinstance(a, (list, tuple)) or not isinstance(b, (list, tuple)):
            raise _Mismatch(path, a, b, f"type differs: {type(a).__name__} vs {type(b).__name__}")
        if len(a) != len(b):
            raise _Mismatch(path, a, b, f"length differs: {len(a)} vs {len(b)}")
        for i, (x, y) in enumerate(zip(a, b)):
            self.check(x, y, f"{path}[{i}]", binding)

    def _check_dict(self, a, b, path, binding):
        if not isinstance(a, dict) or not isinstance(b, dict):
            raise _Mismatch(path, a, b, f"type differs: {type(a).__name__} vs {type(b).__name__}")
        if all(not isinstance(k, Node) for k in a) and all(not isinstance(k, Node) for k in b):
            self._check_keyed(a, b, path, binding, dict(a), dict(b))
        elif all(isinstance(k, GlobalVar) for k in list(a) + list(b)):
            self._check_keyed(a, b, path, binding, {k.name_hint: v for k, v in a.items()},
                              {k.name_hint: v for k, v in b.items()}, fresh_scope=True)
        else:
            # Node keys (e.g. buffer_map's parameter vars): compare entries in order.
            if len(a) != len(b):
                raise _Mismatch(path, a, b, f"number of entries differs: {len(a)} vs {len(b)}")
            for (ka, va), (kb, vb) in zip(a.items(), b.items()):
                where = f"{path}[{_key_text(ka)}]"
                self.check(ka, kb, where + ".key", binding)
                self.check(va, vb, where, binding)

    def _check_keyed(self, a, b, path, binding, by_key_a, by_key_b, fresh_scope=False):
        """Compares entries by key; with fresh_scope (a module's functions) each entry
        gets its own variable bijection, as variables never cross functions in text."""
        missing = [k for k in by_key_a if k not in by_key_b]
        extra = [k for k in by_key_b if k not in by_key_a]
        if missing or extra:
            raise _Mismatch(path, sorted(by_key_a, key=repr), sorted(by_key_b, key=repr),
                            f"keys differ: only in lhs {missing}, only in rhs {extra}")
        for k, v in by_key_a.items():
            if fresh_scope:
                saved = self.lhs_to_rhs, self.rhs_to_lhs, self.proven
                self.lhs_to_rhs, self.rhs_to_lhs, self.proven = {}, {}, set()
            try:
                self.check(v, by_key_b[k], f"{path}[{k!r}]", binding)
            finally:
                if fresh_scope:
                    self.lhs_to_rhs, self.rhs_to_lhs, self.proven = saved

    def _check_leaf(self, a, b, path):
        arr_a, arr_b = _as_array(a), _as_array(b)
        if arr_a is not None or arr_b is not None:
            if arr_a is None or arr_b is None:
                raise _Mismatch(path, a, b, "array vs non-array")
            if arr_a.dtype != arr_b.dtype or arr_a.shape != arr_b.shape:
                raise _Mismatch(path, a, b, f"array {arr_a.dtype}{list(arr_a.shape)} vs "
                                f"{arr_b.dtype}{list(arr_b.shape)}")
            if not np.array_equal(arr_a, arr_b, equal_nan=arr_a.dtype.kind in "fc"):
                raise _Mismatch(path, a, b, "array contents differ")
            return
        if isinstance(a, str) and isinstance(b, str):
            if str(a) != str(b):
                raise _Mismatch(path, a, b, "values differ")
            return
        if type(a) is not type(b):
            raise _Mismatch(path, a, b, f"type differs: {type(a).__name__} vs {type(b).__name__}")
        if isinstance(a, float) and math.isnan(a) and math.isnan(b):
            return
        if a != b:
            raise _Mismatch(path, a, b, "values differ")


def _shown(value):
    text = repr(value)
    if len(text) > _MAX_SHOWN:
        text = text[:_MAX_SHOWN] + "..."
    return text


def structural_equal(lhs, rhs, map_free_vars=True):
    """Whether ``lhs`` and ``rhs`` have the same structure, up to renaming of variables.

    With ``map_free_vars=False``, variables are matched only where a node
    defines them (fields listed in its ``_binding_fields``: loop variables,
    parameters, block axes, declared buffers); elsewhere they must be the
    same object.

    >>> from rvm.ir.expr import GlobalVar
    >>> structural_equal(GlobalVar("f"), GlobalVar("f"))
    True
    """
    try:
        _EqualChecker(map_free_vars).check(lhs, rhs, "root")
    except _Mismatch:
        return False
    return True


def assert_structural_equal(lhs, rhs, map_free_vars=True):
    """Raises ValueError naming the path to the first difference and both sides' values.

    >>> from rvm.ir.expr import GlobalVar
    >>> assert_structural_equal(GlobalVar("f"), GlobalVar("f"))
    """
    try:
        _EqualChecker(map_free_vars).check(lhs, rhs, "root")
    except _Mismatch as err:
        raise ValueError(
            f"structural mismatch at {err.path}: {err.reason}\n"
            f"  lhs: {_shown(err.lhs)}\n  rhs: {_shown(err.rhs)}") from None


class _Hasher:
    """Feeds a canonical token stream of a value into blake2b (process-independent)."""

    def __init__(self, map_free_vars=True):
        self.digest = hashlib.blake2b(digest_size=8)
        self.map_free_vars = map_free_vars
        self.var_index = {}
        self.alive = []

    def token(self, tag, text=""):
        self.digest.update(f"{tag}:{text}\x00".encode())

    def visit(self, x, binding=False):
        if isinstance(x, Node):
            if _is_var(x):
                index = self.var_index.get(id(x))
                if index is not None:
                    self.token("varref", str(index))
                    return
                if not (binding or self.map_free_vars):
                    # A free variable is itself, as structural_equal(map_free_vars=False) says.
                    self.alive.append(x)
                    self.token("freevar", f"{type(x).__qualname__}@{id(x)}")
                    return
                self.var_index[id(x)] = len(self.var_index)
                self.alive.append(x)
                self.token("var", type(x).__qualname__)
                outer = self.map_free_vars
                self.map_free_vars = outer or binding  # as in _EqualChecker._check_var
                for name in x._fields:
                    self.token("field", name)
                    self.visit(getattr(x, name))
                self.map_free_vars = outer
                return
            self.token("node", type(x).__qualname__)
            binding_fields = _binding_fields(x, binding)
            for name in _compared_fields(x):
                self.token("field", name)
                self.visit(getattr(x, name), name in binding_fields)
        elif isinstance(x, (list, tuple)):
            self.token("seq", str(len(x)))
            for item in x:
                self.visit(item, binding)
        elif isinstance(x, dict):
            self.token("dict", str(len(x)))
            items = list(x.items())
            functions = bool(x) and all(isinstance(k, GlobalVar) for k in x)
            if functions:
                items.sort(key=lambda kv: kv[0].name_hint)
            elif all(not isinstance(k, Node) for k in x):
                items.sort(key=lambda kv: repr(kv[0]))
            for k, v in items:
                self.visit(k, binding)
                if functions:  # each function numbers its variables afresh
                    saved, self.var_index = self.var_index, {}
                    self.visit(v, binding)
                    self.var_index = saved
                else:
                    self.visit(v, binding)
        else:
            self.leaf(x)

    def leaf(self, x):
        arr = _as_array(x)
        if arr is not None:
            arr = np.ascontiguousarray(arr)
            self.token("array", f"{arr.dtype}{list(arr.shape)}")
            self.digest.update(arr.tobytes())
        elif isinstance(x, str):
            self.token("str", str(x))
        elif isinstance(x, float):
            # Equal floats must hash alike: -0.0 == 0.0, and every NaN equals every NaN here.
            canonical = "nan" if math.isnan(x) else struct.pack("<d", x + 0.0).hex()
            self.token("float", canonical)
        else:
            self.token(type(x).__name__, repr(x))


def structural_hash(value, map_free_vars=True):
    """A 64-bit hash consistent with structural_equal (rename-invariant, stable across runs).

    With ``map_free_vars=False`` a variable that no enclosing node defines hashes as that very
    object (matching ``structural_equal(..., map_free_vars=False)``), so such hashes are not
    stable across runs.

    >>> from rvm.ir.expr import GlobalVar
    >>> from rvm.tir.expr import Var
    >>> structural_hash(GlobalVar("f")) == structural_hash(GlobalVar("f"))
    True
    >>> x, y = Var("x", "int32"), Var("y", "int32")
    >>> structural_hash(x + 1) == structural_hash(y + 1)
    True
    >>> structural_hash(x + 1, map_free_vars=False) == structural_hash(y + 1, map_free_vars=False)
    False
    """
    hasher = _Hasher(map_free_vars)
    hasher.visit(value)
    return int.from_bytes(hasher.digest.digest(), "little")
