"""``rvm.ir.transform`` is ``rvm.transform`` itself (TVM's path to the pass infrastructure:
``PassContext``, ``Sequential``, ``module_pass``); this facade replaces itself with that
package on import."""
import sys

from rvm import transform as _transform

sys.modules[__name__] = _transform
