"""The MLP, the small CNN and the transformer encoder block through both importers: one
executable with a symbolic batch runs batches 1, 7 and 64 and matches torch eager to 1e-4
relative; the default build fuses what it should."""
import numpy as np
import pytest

import rvm
from rvm import relax
from rvm.relax.frontend.torch import from_exported_program, from_fx
from rvm.tir.function import PrimFunc
from tests.relax.frontend.torch_models import MODELS, assert_close, run_torch, seeded, torch

pytestmark = pytest.mark.frontend


def _import(name, importer):
    model_class, shape = MODELS[name]
    model = seeded(model_class)
    if importer == "fx":
        return model, from_fx(torch.fx.symbolic_trace(model), [(("batch",) + shape, "float32")])
    batch = torch.export.Dim("batch", min=1, max=1024)
    program = torch.export.export(model, (torch.randn(2, *shape),),
                                  dynamic_shapes={"x": {0: batch}})
    return model, from_exported_program(program, unwrap_unit_return_tuple=True)


@pytest.mark.parametrize("importer", ["fx", "exported_program"])
@pytest.mark.parametrize("name", sorted(MODELS))
def test_models_match_torch_for_every_batch(name, importer):
    model, mod = _import(name, importer)
    vm = relax.VirtualMachine(relax.build(mod), rvm.cpu())
    shape = MODELS[name][1]
    for batch in (1, 7, 64):
        x = np.random.default_rng(batch).standard_normal((batch,) + shape).astype("float32")
        assert_close(vm["main"](x).numpy(), run_torch(model, x))


def _kernels(mod):
    lowered = relax.transform.default_build_pipeline()(mod)
    return sorted(gv.name_hint for gv, f in lowered.functions.items()
                  if isinstance(f, PrimFunc) and not gv.name_hint.startswith("shape_func"))


@pytest.mark.parametrize("importer", ["fx", "exported_program"])
def test_the_imported_mlp_is_two_kernels(importer):
    assert _kernels(_import("mlp", importer)[1]) == ["fused_NT_matmul1_add1",
                                                     "fused_NT_matmul_add_relu"]


def test_conv_batch_norm_and_relu_fuse_into_one_kernel():
    # the inference batch norm is a multiply-add by constants folded at build
    # (DecomposeOpsForInference), fused with the conv, its bias and the relu
    kernels = _kernels(_import("cnn", "fx")[1])
    assert "fused_conv2d_add_multiply1_add2_relu" in kernels
    assert "fused_conv2d1_add3_multiply3_add5_relu1" in kernels
    assert not [k for k in kernels if k.rstrip("0123456789") in
                ("relu", "batch_norm", "add", "multiply", "sqrt", "divide", "subtract")]
