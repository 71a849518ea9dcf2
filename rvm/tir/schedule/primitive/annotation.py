"""Annotations: key/value hints on blocks and loops (read by later passes and the tuner).

Values are plain data: str, int, float (finite), bool, None, lists and dicts
of these; an expression or sampled variable is stored as its constant value.
The keys later passes read as numbers are checked against ``ANNOTATION_RULES``
(what they apply to, an int within bounds), so a pass never reads a value it
cannot use; keys under ``rvm.`` are the compiler's own (its passes set them
with values a schedule cannot express) and a schedule may not set them.
"""
import math
from typing import NamedTuple

from rvm.ir.expr import PrimExpr
from rvm.tir.expr import FloatImm, StringImm
from rvm.tir.schedule.primitive.for_kind import MAX_UNROLL_STEPS
from rvm.tir.schedule.rv import ExprRV

INT32_MAX = 2 ** 31 - 1
RESERVED_PREFIX = "rvm."


class AnnotationRule(NamedTuple):
    """An annotation key's rule: set on a ``"loop"`` or a ``"block"``, an int in
    [``low``, ``high``]."""

    applies_to: str
    low: int
    high: int


ANNOTATION_RULES = {
    # UnrollLoop: the steps a loop nest may unroll into (copies of its body).
    "pragma_auto_unroll_max_step": AnnotationRule("loop", 0, MAX_UNROLL_STEPS),
    # RewriteParallelVectorizeUnroll reads these on the root block.
    "meta_schedule.parallel": AnnotationRule("block", 0, INT32_MAX),
    "meta_schedule.vectorize": AnnotationRule("block", 0, INT32_MAX),
    "meta_schedule.unroll_explicit": AnnotationRule("block", 0, MAX_UNROLL_STEPS),
    "meta_schedule.unroll_implicit": AnnotationRule("block", 0, MAX_UNROLL_STEPS),
}


class Annotations:
    """Schedule methods adding and removing annotations."""

    def annotate(self, block_or_loop, ann_key, ann_val):
        """Sets annotation ``ann_key`` of a block or loop to ``ann_val`` (a str, number, list,
        or a sampled variable, which is stored as its value)."""
        sref = self._block_or_loop(block_or_loop, "annotate")
        if not isinstance(ann_key, str):
            raise TypeError(f"annotate: ann_key must be a str, got {type(ann_key).__name__}")
        if not ann_key or not ann_key.isprintable():
            raise self._error("annotate", "an annotation key is a non-empty string of printable "
                              "characters", sref, f"key {ann_key!r}")
        if ann_key.startswith(RESERVED_PREFIX):
            raise self._error("annotate", f"keys under '{RESERVED_PREFIX}' are set by the "
                              "compiler's passes, not by a schedule", sref, f"key {ann_key!r}")
        value = self._annotation_value(ann_val, sref)
        if not _is_plain(value):
            raise TypeError(f"annotate: ann_val must be a str, int, float, bool, list or dict "
                            f"of these, or a sampled variable; got {type(ann_val).__name__}")
        if not _all_finite(value):
            raise self._error("annotate", "a number in an annotation is finite", sref,
                              f"key {ann_key!r}, value {value!r}")
        rule = ANNOTATION_RULES.get(ann_key)
        if rule is not None:
            self._check_annotation_rule(sref, ann_key, value, rule)
        self._set_annotations(sref, {**sref.stmt.annotations, ann_key: value})
        # A trace keeps sampled variables (a replay may decide them otherwise), else the value.
        symbolic = isinstance(ann_val, PrimExpr) and not isinstance(ann_val, (FloatImm, StringImm))
        self._record("Annotate", [block_or_loop, ann_val if symbolic else value], [ann_key], None)

    def unannotate(self, block_or_loop, ann_key):
        """Removes annotation ``ann_key`` of a block or loop."""
        sref = self._block_or_loop(block_or_loop, "unannotate")
        if ann_key not in sref.stmt.annotations:
            raise self._error("unannotate", "there is no annotation with this key", sref,
                              f"key {ann_key!r}; it has {sorted(sref.stmt.annotations)}")
        annotations = {k: v for k, v in sref.stmt.annotations.items() if k != ann_key}
        self._set_annotations(sref, annotations)
        self._record("Unannotate", [block_or_loop], [ann_key], None)

    def _annotation_value(self, ann_val, sref):
        """The plain value stored for ``ann_val``: constants of expressions, sampled values."""
        if isinstance(ann_val, FloatImm):
            return ann_val.value
        if isinstance(ann_val, StringImm):
            return ann_val.value
        if isinstance(ann_val, ExprRV) or not isinstance(ann_val, PrimExpr):
            return self._value(ann_val) if isinstance(ann_val, ExprRV) else ann_val
        try:
            return self._value(ann_val)
        except ValueError:
            raise self._error("annotate", "an expression value must be a constant or made "
                              "of sampled variables", sref, f"value {ann_val!r}") from None

    def _check_annotation_rule(self, sref, key, value, rule):
        kind = "block" if sref.is_block else "loop"
        if kind != rule.applies_to:
            raise self._error("annotate", f"{key!r} is an annotation of a {rule.applies_to}",
                              sref, f"set on a {kind}")
        if isinstance(value, bool) or not isinstance(value, int) \
                or not rule.low <= value <= rule.high:
            raise self._error("annotate", f"{key!r} takes an int in [{rule.low}, {rule.high}]",
                              sref, f"got {value!r}")

    def _set_annotations(self, sref, annotations):
        old = sref.stmt
        new = old.with_fields(annotations=annotations)
        if sref.is_block:
            self._replace(sref, {sref.realize: sref.realize.with_fields(block=new)}, {old: new})
        else:
            self._replace(sref, {old: new})


def _is_plain(value):
    if value is None or isinstance(value, (str, bool, int, float)):
        return True
    if isinstance(value, (list, tuple)):
        return all(_is_plain(v) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _is_plain(v) for k, v in value.items())
    return False


def _all_finite(value):
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, (list, tuple)):
        return all(_all_finite(v) for v in value)
    if isinstance(value, dict):
        return all(_all_finite(v) for v in value.values())
    return True
