"""Tuning a model imported with a symbolic batch: kernels are measured on concrete inputs,
so tune_relax says which kernels it leaves out, and relax.transform.BindSymbolicVars
specializes the model to the shapes to tune for (TVM's way), after which every kernel is
a task and the records apply to the specialized module."""
import warnings

import numpy as np
import pytest

import rvm
from rvm import meta_schedule as ms
from rvm import relax
from rvm.meta_schedule.runner import EvaluatorConfig, LocalRunner
from rvm.meta_schedule.task_scheduler import RoundRobin
from rvm.script import ir as I, relax as R  # noqa: E741
from rvm.tir.expr import IntImm

TARGET = "llvm --num-cores=1"


@I.ir_module
class Dynamic:
    """A dense layer over a symbolic batch ``n``, as importers give a model."""

    @R.function
    def main(x: R.Tensor(("n", 16), "float32"), w: R.Tensor((16, 8), "float32")):
        with R.dataflow():
            y = R.nn.relu(R.matmul(x, w))
            R.output(y)
        return y


def _dims(mod):
    return mod["main"].params[0].struct_info_.shape_values


def _run(mod, x, w):
    vm = relax.VirtualMachine(relax.build(mod, target="c"), rvm.cpu())
    return vm["main"](x, w).numpy()


def _inputs(batch):
    rng = np.random.default_rng(batch)
    return (rng.standard_normal((batch, 16)).astype("float32"),
            rng.standard_normal((16, 8)).astype("float32"))


def test_binding_by_name_or_by_var_makes_the_shapes_static():
    n = _dims(Dynamic)[0]
    for key in ("n", n):
        bound = relax.transform.BindSymbolicVars({key: 3})(Dynamic)
        dims = _dims(bound)
        assert all(isinstance(d, IntImm) for d in dims) and [d.value for d in dims] == [3, 16]
        ret = bound["main"].ret_struct_info.shape_values
        assert [d.value for d in ret] == [3, 8]
    assert not isinstance(_dims(Dynamic)[0], IntImm)  # the input module is unchanged


def test_the_bound_model_computes_what_the_symbolic_one_does_at_that_shape():
    x, w = _inputs(3)
    bound = relax.transform.BindSymbolicVars({"n": 3}, func_name="main")(Dynamic)
    np.testing.assert_allclose(_run(bound, x, w), _run(Dynamic, x, w), rtol=1e-6)
    np.testing.assert_allclose(_run(bound, x, w), np.maximum(x @ w, 0), rtol=1e-5, atol=1e-5)
    with pytest.raises(Exception, match="3"):  # specialized: another batch is refused
        _run(bound, *_inputs(4))


@pytest.mark.parametrize("binding, error, message", [
    ({"m": 3}, ValueError, r"no symbolic variable \['m'\] in the parameters of 'main'; they "
                           r"have \['n'\]"),
    ({"n": -1}, ValueError, "'n' must be bound to a non-negative int, got -1"),
    ({"n": True}, ValueError, "'n' must be bound to a non-negative int, got True"),
    ({"n": 2.5}, ValueError, "'n' must be bound to a non-negative int, got 2.5"),
    ({3: 3}, TypeError, "keys must be names or tir.Vars, got int"),
    ([("n", 3)], TypeError, "binding_map must be a dict, got list"),
])
def test_bad_bindings_are_refused_naming_what_was_expected(binding, error, message):
    with pytest.raises(error, match=message):
        relax.transform.BindSymbolicVars(binding, func_name="main")(Dynamic)


def test_a_function_that_is_not_relax_is_refused():
    mod = relax.transform.LegalizeOps()(Dynamic)
    kernel = next(gv.name_hint for gv, f in mod.functions.items() if gv.name_hint != "main")
    with pytest.raises(ValueError, match=f"'{kernel}' is a PrimFunc, expected a Relax"):
        relax.transform.BindSymbolicVars({"n": 3}, func_name=kernel)(mod)


def test_tune_relax_says_which_kernels_it_cannot_tune(tmp_path):
    tasks = ms.relax_integration.extract_tasks(Dynamic, TARGET)
    assert len(tasks) == 0 and [name for name, _ in tasks.skipped] == ["fused_matmul_relu"]
    with pytest.warns(RuntimeWarning, match=r"1 kernel\(s\) not tuned: fused_matmul_relu: "
                                            r"cannot tune a kernel with symbolic shapes.*"
                                            r"BindSymbolicVars"):
        database = ms.relax_integration.tune_relax(Dynamic, {}, TARGET, str(tmp_path),
                                                   max_trials_global=4, progress=False)
    assert len(database.workloads) == 0


@pytest.mark.slow
def test_a_model_specialized_per_batch_is_tuned_and_its_records_apply(tmp_path):
    runner = LocalRunner(evaluator_config=EvaluatorConfig(number=1, repeat=1, min_repeat_ms=0))
    for batch in (1, 3):
        bound = relax.transform.BindSymbolicVars({"n": batch})(Dynamic)
        tasks = ms.relax_integration.extract_tasks(bound, TARGET)
        assert [t.task_name for t in tasks] == ["fused_matmul_relu"] and not tasks.skipped
        with warnings.catch_warnings():
            warnings.simplefilter("error", RuntimeWarning)  # nothing left out
            database = ms.relax_integration.tune_relax(
                bound, {}, TARGET, str(tmp_path), max_trials_global=3, num_trials_per_iter=3,
                runner=runner, cost_model="random", seed=0,
                task_scheduler=RoundRobin(remeasure_top_k=0), progress=False)
        assert database.query_ir_module(tasks[0].mod, TARGET) is not None
        tuned = relax.transform.MetaScheduleApplyDatabase(str(tmp_path),
                                                          enable_warning=True)(bound)
        x, w = _inputs(batch)
        np.testing.assert_allclose(_run(tuned, x, w), np.maximum(x @ w, 0), rtol=1e-5,
                                   atol=1e-5)
    assert len(database.workloads) == 2  # one per batch, in one work_dir


def _sliced_positions():
    """positions[:, :n] + x for x of a symbolic length n, as a BERT's position ids are
    sliced to the sequence length: ``n`` is in the slice's attributes, not only in shapes."""
    from rvm.relax.block_builder import BlockBuilder
    from rvm.relax.expr import Var, const
    from rvm.relax.op.binary import add
    from rvm.relax.op.index import strided_slice
    from rvm.relax.struct_info import TensorStructInfo
    from rvm.tir.expr import Var as TirVar

    n = TirVar("n", "int64")
    x = Var("x", TensorStructInfo((n,), "float32"))
    positions = const(np.arange(8, dtype="float32").reshape(1, 8))
    bb = BlockBuilder()
    with bb.function("main", [x]):
        with bb.dataflow():
            sliced = bb.emit(strided_slice(positions, [1], [0], [n], assume_inbound=True))
            out = bb.emit_output(add(sliced, x))
        bb.emit_func_output(out)
    return bb.get()


def test_a_variable_in_call_attributes_is_bound_too():
    bound = relax.transform.BindSymbolicVars({"n": 5})(_sliced_positions())
    assert "n" not in [v.name_hint for v in _free_vars(bound)]
    tasks = ms.relax_integration.extract_tasks(bound, TARGET)
    assert len(tasks) == 1 and not tasks.skipped  # no kernel takes n as a scalar any more
    vm = relax.VirtualMachine(relax.build(bound, target="c"), rvm.cpu())
    x = np.ones(5, "float32")
    np.testing.assert_array_equal(vm["main"](x).numpy(), np.arange(5.0)[None] + 1)


def _free_vars(mod):
    from rvm.relax.analysis.struct_info_analysis import collect_tir_vars

    found = []
    for binding in mod["main"].body.blocks[0].bindings:
        found += collect_tir_vars([binding.var.struct_info_, binding.value.attrs])
    return found
