"""``rvm.tir.transform`` is ``rvm.transform.tir`` itself (TVM's path to the passes over
PrimFuncs); this facade replaces itself with that package on import."""
import sys

from rvm.transform import tir as _tir_transform

sys.modules[__name__] = _tir_transform
