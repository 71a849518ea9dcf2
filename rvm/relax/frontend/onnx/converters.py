"""Every ONNX converter, by op type: the modules that define them register into
``registry.CONVERTERS`` when imported here."""
from rvm.relax.frontend.onnx import (  # noqa: F401
    ops_bitwise, ops_cast, ops_center_crop_pad, ops_col2im, ops_control, ops_det,
    ops_function, ops_grid, ops_layout, ops_lrn, ops_math, ops_max_unpool, ops_nn, ops_quant,
    ops_random, ops_reduce, ops_resize, ops_reverse_sequence, ops_rnn, ops_roi_align,
    ops_scan, ops_scatter, ops_sequence, ops_shape, ops_spectral, ops_topk,
)
from rvm.relax.frontend.onnx.registry import CONVERTERS, FOLDS, convert_node

__all__ = ["CONVERTERS", "FOLDS", "convert_node", "supported_ops"]


def supported_ops():
    """The ONNX op types the importer converts, sorted."""
    return sorted(CONVERTERS)
