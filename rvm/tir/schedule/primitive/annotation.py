"""Annotations: key/value hints on blocks and loops (read by later passes and the tuner)."""
from rvm.ir.expr import PrimExpr
from rvm.tir.schedule.rv import ExprRV


class Annotations:
    """Schedule methods adding and removing annotations."""

    def annotate(self, block_or_loop, ann_key, ann_val):
        """Sets annotation ``ann_key`` of a block or loop to ``ann_val`` (a str, number, list,
        or a sampled variable, which is stored as its value)."""
        sref = self._block_or_loop(block_or_loop, "annotate")
        if not isinstance(ann_key, str):
            raise TypeError(f"annotate: ann_key must be a str, got {type(ann_key).__name__}")
        value = self._value(ann_val) if isinstance(ann_val, (ExprRV, PrimExpr)) else ann_val
        if not _is_plain(value):
            raise TypeError(f"annotate: ann_val must be a str, int, float, bool, list or dict "
                            f"of these, or a sampled variable; got {type(ann_val).__name__}")
        self._set_annotations(sref, {**sref.stmt.annotations, ann_key: value})
        self._record("Annotate", [block_or_loop, ann_val], [ann_key], None)

    def unannotate(self, block_or_loop, ann_key):
        """Removes annotation ``ann_key`` of a block or loop."""
        sref = self._block_or_loop(block_or_loop, "unannotate")
        if ann_key not in sref.stmt.annotations:
            raise self._error("unannotate", "there is no annotation with this key", sref,
                              f"key {ann_key!r}; it has {sorted(sref.stmt.annotations)}")
        annotations = {k: v for k, v in sref.stmt.annotations.items() if k != ann_key}
        self._set_annotations(sref, annotations)
        self._record("Unannotate", [block_or_loop], [ann_key], None)

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
