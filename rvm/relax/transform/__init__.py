"""``rvm.relax.transform`` is ``rvm.transform`` itself (TVM's path to the Relax passes:
``from rvm.relax.transform import LegalizeOps``); this facade replaces itself with that
package on import, so passes registered there later are seen here too."""
import sys

from rvm import transform as _transform

sys.modules[__name__] = _transform
