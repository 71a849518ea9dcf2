"""``rvm.script.parser.ir`` is ``rvm.script.ir`` itself: TVM's tests import the dialects from
``tvm.script.parser``, so both paths give the one namespace object (this module replaces
itself with it on import)."""
import sys

from rvm.script import ir as _namespace

sys.modules[__name__] = _namespace
