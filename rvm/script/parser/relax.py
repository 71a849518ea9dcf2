"""``rvm.script.parser.relax`` is ``rvm.script.relax`` itself: TVM's tests import the dialects from
``tvm.script.parser``, so both paths give the one namespace object (this module replaces
itself with it on import)."""
import sys

from rvm.script import relax as _namespace

sys.modules[__name__] = _namespace
