"""Structural equality and hashing of IR with TVM's rules (TVM's ``tvm.ir.base``, where a
TVM user imports ``assert_structural_equal`` from).

Two values are structurally equal when they have the same node types and
equal ``_fields``, recursively. Variables (classes with ``_is_var = True``)
are matched through one bijection: a variable in a defining position (a
field listed in its node's ``_binding_fields``: parameters, loop and let
variables, binding variables, block axes, declared buffers, and everything a
defined variable's own fields mention) is matched with the variable at the
same position on the other side; any other variable is free, and must be the
same object unless ``map_free_vars=True``. GlobalVars are names and compare by
name; dicts keyed by GlobalVar (IRModule functions) compare by name regardless
of order, each function with a bijection of its own. Mismatches are reported
with ObjectPaths to the first difference on each side.
"""
import hashlib
import math
import struct

import numpy as np

from rvm.ir.expr import GlobalVar
from rvm.ir.node import Node
from rvm.runtime.object_path import ObjectPath

_MAX_SHOWN = 400


class _Mismatch(Exception):
    """A difference found; each enclosing level adds its step to both sides' paths on the
    way out (paths are built only when there is a mismatch)."""

    def __init__(self, lhs, rhs, reason, lhs_step=None, rhs_step=None):
        super().__init__(reason)
        self.lhs = lhs
        self.rhs = rhs
        self.reason = reason
        self.lhs_steps = [] if lhs_step is None else [lhs_step]  # innermost first
        self.rhs_steps = [] if rhs_step is None else [rhs_step]

    def add(self, kind, key=None, rhs_key=None):
        self.lhs_steps.append((kind, key))
        self.rhs_steps.append((kind, key if rhs_key is None else rhs_key))

    def paths(self):
        """(lhs path, rhs path) as ObjectPaths."""
        result = []
        for steps in (self.lhs_steps, self.rhs_steps):
            path = ObjectPath.root()
            for kind, key in reversed(steps):
                path = _STEP[kind](path, key)
            result.append(path)
        return tuple(result)


_STEP = {
    "attr": ObjectPath.attr,
    "index": ObjectPath.array_index,
    "missing_index": ObjectPath.missing_array_element,
    "map_value": ObjectPath.map_value,
    "missing_entry": lambda path, _key: path.missing_map_entry(),
}


def _is_var(x):
    return isinstance(x, Node) and type(x)._is_var


def _as_array(x):
    """The numpy view of an array-like value (NDArray, numpy array), else None."""
    if isinstance(x, np.ndarray):
        return x
    if not isinstance(x, Node) and hasattr(x, "numpy") and hasattr(x, "shape"):
        return x.numpy()
    return None


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


def _defines_everything(node, binding):
    """Whether ``node`` sits in a defining position without naming its own binding fields
    (a FuncStructInfo's parameter struct info): every variable inside it is then defined
    there, as TVM's DefEqual does."""
    return binding and getattr(type(node), "_binding_fields", None) is None


class _EqualChecker:
    """Compares two values, keeping the variable bijection; raises _Mismatch."""

    def __init__(self, map_free_vars):
        self.map_free_vars = map_free_vars
        self.lhs_to_rhs = {}
        self.rhs_to_lhs = {}
        self.proven = set()
        self.alive = []  # keeps compared objects alive so their ids stay unique

    def check(self, a, b, binding=False):
        if isinstance(a, Node) or isinstance(b, Node):
            self._check_node(a, b, binding)
        elif isinstance(a, (list, tuple)) or isinstance(b, (list, tuple)):
            self._check_sequence(a, b, binding)
        elif isinstance(a, dict) or isinstance(b, dict):
            self._check_dict(a, b, binding)
        else:
            self._check_leaf(a, b)

    def _check_fields(self, a, b, names, binding_fields=()):
        for name in names:
            try:
                self.check(getattr(a, name), getattr(b, name), binding=name in binding_fields)
            except _Mismatch as err:
                err.add("attr", name)
                raise

    def _check_node(self, a, b, binding):
        if type(a) is not type(b):
            raise _Mismatch(a, b, f"node type differs: {type(a).__name__} vs "
                            f"{type(b).__name__}")
        if _is_var(a):
            self._check_var(a, b, binding)
            return
        key = (id(a), id(b))
        if key in self.proven:
            return
        outer = self.map_free_vars
        self.map_free_vars = outer or _defines_everything(a, binding)
        try:
            self._check_fields(a, b, _compared_fields(a), _binding_fields(a, binding))
        finally:
            self.map_free_vars = outer
        self.proven.add(key)
        self.alive.append((a, b))

    def _check_var(self, a, b, binding):
        mapped = self.lhs_to_rhs.get(id(a))
        back = self.rhs_to_lhs.get(id(b))
        if mapped is not None or back is not None:
            if mapped is b and back is a:
                return
            if mapped is not None:
                raise _Mismatch(a, b, f"variable {a.name_hint!r} was matched with "
                                f"{mapped.name_hint!r} earlier, here it meets {b.name_hint!r}")
            raise _Mismatch(a, b, f"variable {b.name_hint!r} (rhs) was matched with "
                            f"{back.name_hint!r} earlier, here it meets {a.name_hint!r}")
        if not self.map_free_vars and not binding and a is not b:
            raise _Mismatch(a, b, f"free variables {a.name_hint!r} and {b.name_hint!r} "
                            "are different objects (map_free_vars=False)")
        # A variable's defining site also defines the variables its fields mention (the
        # symbolic dimensions in a Relax parameter's struct info).
        outer = self.map_free_vars
        self.map_free_vars = outer or binding
        try:
            self._check_fields(a, b, a._fields)
        finally:
            self.map_free_vars = outer
        self.lhs_to_rhs[id(a)] = b
        self.rhs_to_lhs[id(b)] = a
        self.alive.append((a, b))

    def _check_sequence(self, a, b, binding):
        """Elements first, then the lengths: a difference inside the common part is the
        first mismatch, else the first element one side lacks."""
        if not isinstance(a, (list, tuple)) or not isinstance(b, (list, tuple)):
            raise _Mismatch(a, b, f"type differs: {type(a).__name__} vs {type(b).__name__}")
        common = min(len(a), len(b))
        for i in range(common):
            try:
                self.check(a[i], b[i], binding)
            except _Mismatch as err:
                err.add("index", i)
                raise
        if len(a) != len(b):
            reason = f"length differs: {len(a)} vs {len(b)}"
            if len(a) > len(b):
                raise _Mismatch(a[common], None, reason, ("index", common),
                                ("missing_index", common))
            raise _Mismatch(None, b[common], reason, ("missing_index", common),
                            ("index", common))

    def _check_dict(self, a, b, binding):
        if not isinstance(a, dict) or not isinstance(b, dict):
            raise _Mismatch(a, b, f"type differs: {type(a).__name__} vs {type(b).__name__}")
        if all(not isinstance(k, Node) for k in a) and all(not isinstance(k, Node) for k in b):
            self._check_keyed(a, b, binding, {k: k for k in a}, {k: k for k in b})
        elif all(isinstance(k, GlobalVar) for k in list(a) + list(b)):
            self._check_keyed(a, b, binding, {k.name_hint: k for k in a},
                              {k.name_hint: k for k in b}, fresh_scope=True)
        else:
            self._check_ordered_entries(a, b, binding)

    def _check_ordered_entries(self, a, b, binding):
        """Node keys (a PrimFunc's buffer_map): entries compared in order."""
        items_a, items_b = list(a.items()), list(b.items())
        for (ka, va), (kb, vb) in zip(items_a, items_b):
            try:
                self.check(ka, kb, binding)
                self.check(va, vb, binding)
            except _Mismatch as err:
                err.add("map_value", ka, kb)
                raise
        if len(items_a) != len(items_b):
            reason = f"number of entries differs: {len(items_a)} vs {len(items_b)}"
            common = min(len(items_a), len(items_b))
            if len(items_a) > len(items_b):
                key, value = items_a[common]
                raise _Mismatch(value, None, reason, ("map_value", key), ("missing_entry", None))
            key, value = items_b[common]
            raise _Mismatch(None, value, reason, ("missing_entry", None), ("map_value", key))

    def _check_keyed(self, a, b, binding, keys_a, keys_b, fresh_scope=False):
        """Compares entries by key (``keys_*`` map the compared key to each side's own
        key); with fresh_scope (a module's functions) each entry gets its own variable
        bijection, as variables never cross functions in text."""
        for k, key_a in keys_a.items():
            if k not in keys_b:
                continue
            key_b = keys_b[k]
            if fresh_scope:
                saved = self.lhs_to_rhs, self.rhs_to_lhs, self.proven
                self.lhs_to_rhs, self.rhs_to_lhs, self.proven = {}, {}, set()
            try:
                self.check(a[key_a], b[key_b], binding)
            except _Mismatch as err:
                err.add("map_value", key_a, key_b)
                raise
            finally:
                if fresh_scope:
                    self.lhs_to_rhs, self.rhs_to_lhs, self.proven = saved
        missing = [k for k in keys_a if k not in keys_b]
        extra = [k for k in keys_b if k not in keys_a]
        if missing or extra:
            reason = f"keys differ: only in lhs {missing}, only in rhs {extra}"
            if missing:
                key = keys_a[missing[0]]
                raise _Mismatch(a[key], None, reason, ("map_value", key),
                                ("missing_entry", None))
            key = keys_b[extra[0]]
            raise _Mismatch(None, b[key], reason, ("missing_entry", None), ("map_value", key))

    def _check_leaf(self, a, b):
        arr_a, arr_b = _as_array(a), _as_array(b)
        if arr_a is not None or arr_b is not None:
            if arr_a is None or arr_b is None:
                raise _Mismatch(a, b, "array vs non-array")
            if arr_a.dtype != arr_b.dtype or arr_a.shape != arr_b.shape:
                raise _Mismatch(a, b, f"array {arr_a.dtype}{list(arr_a.shape)} vs "
                                f"{arr_b.dtype}{list(arr_b.shape)}")
            if not np.array_equal(arr_a, arr_b, equal_nan=arr_a.dtype.kind in "fc"):
                raise _Mismatch(a, b, "array contents differ")
            return
        if isinstance(a, str) and isinstance(b, str):
            if str(a) != str(b):
                raise _Mismatch(a, b, "values differ")
            return
        if type(a) is not type(b):
            raise _Mismatch(a, b, f"type differs: {type(a).__name__} vs {type(b).__name__}")
        if isinstance(a, float) and math.isnan(a) and math.isnan(b):
            return
        if a != b:
            raise _Mismatch(a, b, "values differ")


def _shown(value):
    text = repr(value)
    if len(text) > _MAX_SHOWN:
        text = text[:_MAX_SHOWN] + "..."
    return text


def _first_mismatch(lhs, rhs, map_free_vars):
    try:
        _EqualChecker(map_free_vars).check(lhs, rhs)
    except _Mismatch as err:
        return err
    return None


def structural_equal(lhs, rhs, map_free_vars=False):
    """Whether ``lhs`` and ``rhs`` have the same structure, up to renaming of the variables
    they define.

    Variables are matched where a node defines them (fields listed in its
    ``_binding_fields``: function and loop variables, let and binding
    variables, block axes, declared buffers, and the symbolic dimensions in a
    parameter's struct info). Elsewhere a variable is free: with
    ``map_free_vars=False`` (the default, as in TVM) it must be the very same
    object on both sides; with ``map_free_vars=True`` free variables are
    matched one-to-one on first meeting.

    >>> from rvm.tir.expr import Var
    >>> x, y = Var("x", "int32"), Var("y", "int32")
    >>> structural_equal(x + 1, y + 1), structural_equal(x + 1, y + 1, map_free_vars=True)
    (False, True)
    """
    return _first_mismatch(lhs, rhs, map_free_vars) is None


def get_first_structural_mismatch(lhs, rhs, map_free_vars=False):
    """None when ``lhs`` and ``rhs`` are structurally equal, else the ObjectPaths (lhs path,
    rhs path) of the first difference (TVM's ``tvm.ir.base.get_first_structural_mismatch``).

    >>> from rvm.tir.expr import Var
    >>> x = Var("x", "int32")
    >>> [str(p) for p in get_first_structural_mismatch(x + 1, x + 2)]
    ['<root>.b.value', '<root>.b.value']
    """
    err = _first_mismatch(lhs, rhs, map_free_vars)
    return None if err is None else err.paths()


def assert_structural_equal(lhs, rhs, map_free_vars=False):
    """Raises ValueError naming the paths of the first difference, the reason and both
    sides' values.

    >>> from rvm.ir.expr import GlobalVar
    >>> assert_structural_equal(GlobalVar("f"), GlobalVar("f"))
    """
    err = _first_mismatch(lhs, rhs, map_free_vars)
    if err is not None:
        lhs_path, rhs_path = err.paths()
        raise ValueError(
            f"StructuralEqual check failed, caused by lhs at {lhs_path} and rhs at "
            f"{rhs_path}: {err.reason}\n  lhs: {_shown(err.lhs)}\n  rhs: {_shown(err.rhs)}")


class _Hasher:
    """Feeds a canonical token stream of a value into blake2b (process-independent)."""

    def __init__(self, map_free_vars=False):
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
            outer = self.map_free_vars
            self.map_free_vars = outer or _defines_everything(x, binding)
            for name in _compared_fields(x):
                self.token("field", name)
                self.visit(getattr(x, name), name in binding_fields)
            self.map_free_vars = outer
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


def structural_hash(value, map_free_vars=False):
    """A 64-bit hash consistent with structural_equal: values equal under a
    ``map_free_vars`` setting hash alike under it.

    Defined variables hash by definition order, so renaming does not change
    the hash. A free variable hashes as that very object with
    ``map_free_vars=False`` (the default, as in TVM; such hashes are not stable
    across runs) and by order of first meeting with ``map_free_vars=True``.

    >>> from rvm.ir.expr import GlobalVar
    >>> from rvm.tir.expr import Var
    >>> structural_hash(GlobalVar("f")) == structural_hash(GlobalVar("f"))
    True
    >>> x, y = Var("x", "int32"), Var("y", "int32")
    >>> structural_hash(x + 1) == structural_hash(y + 1)
    False
    >>> structural_hash(x + 1, map_free_vars=True) == structural_hash(y + 1, map_free_vars=True)
    True
    """
    hasher = _Hasher(map_free_vars)
    hasher.visit(value)
    return int.from_bytes(hasher.digest.digest(), "little")
