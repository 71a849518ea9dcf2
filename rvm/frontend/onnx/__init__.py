"""rvm.frontend.onnx: the ONNX importer (``from_onnx``).

This package is a facade; the definitions live in its modules. onnx itself is
imported when an import runs, so this package loads without it.
"""
from rvm.frontend.onnx.importer import OnnxImportError, from_onnx


def supported_ops():
    """The ONNX op types ``from_onnx`` converts, sorted."""
    from rvm.frontend.onnx.converters import supported_ops as ops

    return ops()


__all__ = ["OnnxImportError", "from_onnx", "supported_ops"]
