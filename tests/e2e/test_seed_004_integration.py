"""Seed 004 section 6 (integration with ML frameworks) as written, ``tvm`` -> ``rvm``: TE to
TensorIR (6.1), the BlockBuilder (6.2), a hand-written from_fx over torch.fx (6.3) and the
FashionMNIST MLP through it (6.4); then the same models through the built-in from_fx.

Two things differ from the notes, neither in rvm's API: the FashionMNIST image and the
pickled weights are downloaded in the notes, here a seeded random image and weights of
the same shapes stand in; ``graph.print_tabular()`` needs the ``tabulate`` package, so
the nodes are printed without it when it is absent.
"""
import numpy as np
import pytest

torch = pytest.importorskip("torch")

import rvm  # noqa: E402
from rvm import relax, te, topi  # noqa: E402
from rvm.relax.frontend.torch import from_fx as builtin_from_fx  # noqa: E402

pytestmark = pytest.mark.frontend

fx = torch.fx
nn = torch.nn


# -- 6.1 tensor expressions to TensorIR ----------------------------------------------------
def te_matmul(A: te.Tensor, B: te.Tensor) -> te.Tensor:
    assert A.shape[1] == B.shape[0]
    n = A.shape[0]
    m = B.shape[1]
    k = te.reduce_axis((0, A.shape[1]), name="k")
    return te.compute((n, m), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="matmul")


def te_relu(A: te.Tensor) -> te.Tensor:
    return te.compute(A.shape, lambda i, j: te.max(A[i, j], 0), name="relu")


def test_6_1_tensor_expressions(capsys):
    A = te.placeholder((128, 128), name="A", dtype="float32")
    B = te.placeholder((128, 128), name="B", dtype="float32")
    C = te_matmul(A, B)
    te.create_prim_func([A, B, C]).show()
    X1 = te.placeholder((1, 128), name="X1", dtype="float32")
    Y1 = te_relu(X1)
    te.create_prim_func([X1, Y1]).show()
    C = te_matmul(A, B)
    D = te_relu(C)
    fused = te.create_prim_func([A, B, D])
    fused.show()
    te.create_prim_func([A, B, C, D]).show()
    assert "matmul = T.alloc_buffer" in capsys.readouterr().out
    a, b = (np.random.default_rng(k).standard_normal((128, 128)).astype("float32")
            for k in range(2))
    d = rvm.nd.empty((128, 128), "float32")
    rvm.build(fused, target="c")["main"](rvm.nd.array(a), rvm.nd.array(b), d)
    np.testing.assert_allclose(d.numpy(), np.maximum(a @ b, 0), rtol=1e-4, atol=1e-4)


# -- 6.2 the BlockBuilder ------------------------------------------------------------------
def test_6_2_block_builder():
    A = relax.Var("A", relax.TensorStructInfo((128, 128), "float32"))
    B = relax.Var("B", relax.TensorStructInfo((128, 128), "float32"))
    bb = relax.BlockBuilder()
    with bb.function("main"):
        with bb.dataflow():
            C = bb.emit_te(te_matmul, A, B)
            D = bb.emit_te(te_relu, C)
            R = bb.emit_output(D)
        bb.emit_func_output(R, params=[A, B])
    MyModule = bb.get()
    MyModule.show()
    assert type(C) is relax.DataflowVar and isinstance(C, relax.Var)
    a, b = (np.random.default_rng(k).standard_normal((128, 128)).astype("float32")
            for k in range(2))
    vm = relax.VirtualMachine(relax.build(MyModule, target="llvm"), rvm.cpu())
    np.testing.assert_allclose(vm["main"](a, b).numpy(), np.maximum(a @ b, 0), rtol=1e-4,
                               atol=1e-4)


# -- 6.3 a hand-written from_fx ------------------------------------------------------------
class MyModel(nn.Module):
    def __init__(self):
        super(MyModel, self).__init__()
        self.weight = nn.Parameter(torch.randn(128, 128))

    def forward(self, x):
        x = torch.matmul(x, self.weight)
        x = torch.relu(x)
        return x


def map_param(param: nn.Parameter):
    return relax.const(
        param.data.cpu().numpy(), relax.TensorStructInfo(param.data.shape, "float32")
    )


def fetch_attr(fx_mod, target: str):
    """Helper function to fetch an attr"""
    target_atoms = target.split('.')
    attr_itr = fx_mod
    for i, atom in enumerate(target_atoms):
        if not hasattr(attr_itr, atom):
            raise RuntimeError(f"Node referenced nonexistant target {'.'.join(target_atoms[:i])}")
        attr_itr = getattr(attr_itr, atom)
    return attr_itr


def from_fx(fx_mod, input_shapes, call_function_map, call_module_map):
    input_index = 0
    node_map = {}
    named_modules = dict(fx_mod.named_modules())

    bb = relax.BlockBuilder()

    fn_inputs = []
    fn_output = None
    with bb.function("main"):
        with bb.dataflow():
            for node in fx_mod.graph.nodes:
                if node.op == "placeholder":
                    # create input placeholder
                    shape = input_shapes[input_index]
                    input_index += 1
                    input_var = relax.Var(
                        node.target, relax.TensorStructInfo(shape, "float32")
                    )
                    fn_inputs.append(input_var)
                    node_map[node] = input_var
                elif node.op == "get_attr":
                    node_map[node] = map_param(fetch_attr(fx_mod, node.target))
                elif node.op == "call_function":
                    node_map[node] = call_function_map[node.target](bb, node_map, node)
                elif node.op == "call_module":
                    named_module = named_modules[node.target]
                    node_map[node] = call_module_map[type(named_module)](bb, node_map, node,
                                                                         named_module)
                elif node.op == "output":
                    output = node_map[node.args[0]]
                    assert fn_output is None
                    fn_output = bb.emit_output(output)
        # output and finalize the function
        bb.emit_func_output(output, fn_inputs)
    return bb.get()


def map_matmul(bb, node_map, node: fx.Node):
    A = node_map[node.args[0]]
    B = node_map[node.args[1]]
    return bb.emit_te(te_matmul, A, B)


def map_relu(bb, node_map, node: fx.Node):
    A = node_map[node.args[0]]
    return bb.emit_te(te_relu, A)


def _print_tabular(graph):
    try:
        graph.print_tabular()
    except ImportError:  # torch prints the table with the tabulate package
        for node in graph.nodes:
            print(node.op, node.name, node.target, node.args, node.kwargs)


def _run(mod, *args):
    return relax.VirtualMachine(relax.build(mod, target="llvm"), rvm.cpu())["main"](*args)


def test_6_3_import_through_torch_fx():
    torch.manual_seed(0)
    model = MyModel()
    fx_module = fx.symbolic_trace(model)
    _print_tabular(fx_module.graph)
    for node in fx_module.graph.nodes:
        print(node)
        print(node.op)
    MyModule = from_fx(
        fx_module,
        input_shapes=[(1, 128)],
        call_function_map={
            torch.matmul: map_matmul,
            torch.relu: map_relu,
        },
        call_module_map={},
    )
    MyModule.show()
    x = np.random.default_rng(1).standard_normal((1, 128)).astype("float32")
    with torch.no_grad():
        expected = model(torch.from_numpy(x)).numpy()
    np.testing.assert_allclose(_run(MyModule, x).numpy(), expected, rtol=1e-4, atol=1e-4)
    builtin = builtin_from_fx(fx_module, [((1, 128), "float32")])
    np.testing.assert_allclose(_run(builtin, x).numpy(), expected, rtol=1e-4, atol=1e-4)


# -- 6.4 the FashionMNIST MLP --------------------------------------------------------------
class MLP(nn.Module):
    def __init__(self):
        super(MLP, self).__init__()
        self.linear0 = nn.Linear(784, 128, bias=True)
        self.relu = nn.ReLU()
        self.linear1 = nn.Linear(128, 10, bias=True)

    def forward(self, x):
        x = self.linear0(x)
        x = self.relu(x)
        x = self.linear1(x)
        return x


def map_nn_linear(bb, node_map, node, nn_mod):
    x = node_map[node.args[0]]
    w = map_param(nn_mod.weight)
    if nn_mod.bias is not None:
        b = map_param(nn_mod.bias)
    y = bb.emit_te(topi.nn.dense, x, w)
    return bb.emit_te(topi.add, y, b)


def map_nn_relu(bb, node_map, node, nn_mod):
    return map_relu(bb, node_map, node)


def test_6_4_fashion_mnist_mlp():
    class_names = ['T-shirt/top', 'Trouser', 'Pullover', 'Dress', 'Coat',
                   'Sandal', 'Shirt', 'Sneaker', 'Bag', 'Ankle boot']
    rng = np.random.default_rng(4)
    img = rng.uniform(0, 1, (1, 28, 28)).astype("float32")  # a FashionMNIST image's shape
    mlp_params = {"w0": rng.standard_normal((128, 784)).astype("float32") * 0.05,
                  "b0": rng.standard_normal(128).astype("float32") * 0.05,
                  "w1": rng.standard_normal((10, 128)).astype("float32") * 0.05,
                  "b1": rng.standard_normal(10).astype("float32") * 0.05}
    mlp_model = MLP()
    mlp_model.linear0.weight.data = torch.from_numpy(mlp_params["w0"])
    mlp_model.linear0.bias.data = torch.from_numpy(mlp_params["b0"])
    mlp_model.linear1.weight.data = torch.from_numpy(mlp_params["w1"])
    mlp_model.linear1.bias.data = torch.from_numpy(mlp_params["b1"])
    torch_res = mlp_model(torch.from_numpy(img.reshape(1, 784)))
    pred_kind = np.argmax(torch_res.detach().numpy(), axis=1)
    print("Torch Prediction:", class_names[pred_kind[0]])

    MLPModule = from_fx(
        fx.symbolic_trace(mlp_model),
        input_shapes=[(1, 784)],
        call_function_map={
        },
        call_module_map={
            torch.nn.Linear: map_nn_linear,
            torch.nn.ReLU: map_nn_relu,
        },
    )
    MLPModule.show()
    assert sorted(gv.name_hint for gv in MLPModule.get_global_vars()) == [
        "add", "add1", "dense", "dense1", "main", "te_relu"]
    data_nd = rvm.nd.array(img.reshape(1, 784))
    nd_res = _run(MLPModule, data_nd)
    assert np.argmax(nd_res.numpy(), axis=1)[0] == pred_kind[0]
    expected = torch_res.detach().numpy()
    np.testing.assert_allclose(nd_res.numpy(), expected, rtol=1e-4, atol=1e-5)

    builtin = builtin_from_fx(fx.symbolic_trace(mlp_model), [((1, 784), "float32")])
    np.testing.assert_allclose(_run(builtin, data_nd).numpy(), expected, rtol=1e-4, atol=1e-5)
