"""rvm.relax.frontend.nn: models written as PyTorch-like modules (TVM's
``tvm.relax.frontend.nn``), exported to an IRModule with ``Module.export_tvm``.

>>> from rvm.relax.frontend import nn
>>> class MLP(nn.Module):
...     def __init__(self):
...         self.fc1 = nn.Linear(4, 8)
...         self.fc2 = nn.Linear(8, 2)
...     def forward(self, x):
...         return self.fc2(nn.op.relu(self.fc1(x)))
>>> mod, params = MLP().export_tvm(spec={"forward": {"x": nn.spec.Tensor([1, 4], "float32")}})
>>> [name for name, _ in params]
['fc1.weight', 'fc1.bias', 'fc2.weight', 'fc2.bias']

This package is a facade; the definitions live in its modules.
"""
from rvm.relax.frontend.nn import op, spec
from rvm.relax.frontend.nn.core import Parameter, Tensor, get_default_dtype, set_default_dtype
from rvm.relax.frontend.nn.module import Module, ModuleList
from rvm.relax.frontend.nn.modules import (
    GELU, Conv2D, Embedding, GroupNorm, Identity, LayerNorm, Linear, ReLU, RMSNorm, SiLU,
)

__all__ = [
    "Conv2D", "Embedding", "GELU", "GroupNorm", "Identity", "LayerNorm", "Linear", "Module",
    "ModuleList", "Parameter", "RMSNorm", "ReLU", "SiLU", "Tensor", "get_default_dtype", "op",
    "set_default_dtype", "spec",
]
