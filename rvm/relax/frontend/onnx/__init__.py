"""``rvm.relax.frontend.onnx`` is ``rvm.frontend.onnx`` (``from_onnx``), TVM's path to the
ONNX importer; this facade replaces itself with that package when first imported."""
import importlib
import sys

sys.modules[__name__] = importlib.import_module("rvm.frontend.onnx")
