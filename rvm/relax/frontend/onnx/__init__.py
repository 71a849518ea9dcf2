"""rvm.relax.frontend.onnx: the ONNX importer (``from_onnx``).

This package is a facade; the definitions live in its modules. onnx itself is
imported when an import runs, so this package loads without it.
"""
from rvm.relax.frontend.onnx.common import OnnxImportError
from rvm.relax.frontend.onnx.converters import supported_ops
from rvm.relax.frontend.onnx.importer import from_onnx

__all__ = ["OnnxImportError", "from_onnx", "supported_ops"]
