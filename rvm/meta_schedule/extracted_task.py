"""Task extraction: the kernels of a Relax module worth tuning, each once, with weights.

``extract_tasks(mod, target, params)`` prepares the module as the build
would (parameters bound, operators legalized into kernels and fused), then
collects every PrimFunc a Relax function calls (``call_tir``, or
``call_dps_packed`` by the kernel's name). Kernels that are structurally
equal are one task whose ``weight`` is their number of call sites. Kernels
with symbolic shapes cannot be measured and are left out (``skipped``
lists them with the reason).
"""
from rvm.ir.module import IRModule
from rvm.meta_schedule.arg_info import ArgInfo
from rvm.meta_schedule.database.workload import workload_module
from rvm.meta_schedule.tune_target import tune_target
from rvm.relax.expr import Call, ExternFunc
from rvm.relax.expr_functor import ExprVisitor
from rvm.relax.function import Function
from rvm.tir.function import PrimFunc
from rvm.relax.transform.bind_params import BindParams
from rvm.relax.transform.fuse_transpose_matmul import FuseTransposeMatmul
from rvm.ir.transform import Sequential
from rvm.relax.transform.pipeline import default_build_pipeline
from rvm.relax.transform.attach_attr_layout_free_buffers import layout_free_positions


class ExtractedTask:
    """A kernel to tune: ``task_name``, its workload ``mod``, the ``target``, the
    functions of the Relax module it stands for (``dispatched``), ``weight``, and
    ``layout_free``: the argument positions that are constants at every call of every
    one of them (bound weights, whose packing the build does once)."""

    def __init__(self, task_name, mod, target, dispatched, weight, layout_free=()):
        self.task_name = task_name
        self.mod = mod
        self.target = target
        self.dispatched = list(dispatched)
        self.weight = int(weight)
        self.layout_free = [int(k) for k in layout_free]

    def __repr__(self):
        return f"ExtractedTask({self.task_name!r}, weight={self.weight})"


def prepare_for_tuning(mod, params=None):
    """``mod`` with its kernels as the build will compile them: ``params`` bound to "main",
    then the graph-level passes of the default build pipeline (legalization, fusion: every
    pass before ToNonDataflow), except that a matmul of a transposed constant (a bound
    weight) keeps the transpose for FoldConstant, which transposes the weight once (see
    FuseTransposeMatmul). Tuning and applying records both look at this form."""
    if not isinstance(mod, IRModule):
        raise TypeError(f"expected an IRModule, got {type(mod).__name__}")
    if params:
        mod = BindParams("main", params)(mod)
    graph_passes = []
    for graph_pass in default_build_pipeline().passes:
        if graph_pass.info.name == "ToNonDataflow":
            break
        if graph_pass.info.name == "FuseTransposeMatmul":
            # A transposed bound weight is transposed once at build time (FoldConstant):
            # the kernel then reads it along the output axis, which tiles and vectorizes
            # better than a reduction across vector lanes.
            graph_pass = FuseTransposeMatmul(keep_constant_weights=True)
        graph_passes.append(graph_pass)
    return Sequential(graph_passes, name="PrepareForTuning")(mod)


class _KernelCalls(ExprVisitor):
    """Counts call sites per PrimFunc name."""

    def __init__(self, kernels):
        self.kernels = kernels
        self.counts = {}

    def visit_call_(self, call):
        name = getattr(call.op, "name", None)
        callee = call.args[0] if call.args else None
        kernel = None
        if name == "relax.call_tir":
            kernel = getattr(callee, "name_hint", None)
        elif name == "relax.call_dps_packed" and isinstance(callee, ExternFunc):
            kernel = callee.global_symbol
        if kernel in self.kernels:
            self.counts[kernel] = self.counts.get(kernel, 0) + 1
        super().visit_call_(call)


def kernel_call_counts(mod):
    """{PrimFunc name: call sites in the Relax functions of ``mod``}."""
    kernels = {gv.name_hint for gv, f in mod.functions.items() if isinstance(f, PrimFunc)}
    visitor = _KernelCalls(kernels)
    for _, func in mod.functions.items():
        if isinstance(func, Function):
            visitor.visit_expr(func)
    return visitor.counts


def extract_tasks(mod, target, params=None, module_equality="structural"):
    """The tuning tasks of ``mod``: a list of ExtractedTask, in order of first call.

    The list has an attribute ``skipped``: (kernel name, reason) pairs of
    kernels that cannot be tuned (symbolic shapes, scalar parameters).
    """
    if module_equality != "structural":
        raise ValueError(f"module_equality {module_equality!r} is not supported; "
                         "expected 'structural'")
    target = tune_target(target)
    prepared = prepare_for_tuning(mod, params)
    counts = kernel_call_counts(prepared)
    constant = layout_free_positions(prepared)
    tasks = []
    skipped = []
    by_workload = {}
    for name, weight in counts.items():
        func = prepared[name]
        try:
            ArgInfo.from_prim_func(func)
        except ValueError as err:
            skipped.append((name, str(err)))
            continue
        workload = workload_module(func)
        key = _structural_key(workload)
        task = next((t for t in by_workload.get(key[0], ()) if key[1](t.mod)), None)
        if task is None:
            task = ExtractedTask(name, workload, target, [], 0, constant.get(name, ()))
            by_workload.setdefault(key[0], []).append(task)
            tasks.append(task)
        else:
            task.layout_free = [k for k in task.layout_free if k in constant.get(name, ())]
        task.dispatched.append(IRModule({name: func}))
        task.weight += weight
    result = _TaskList(tasks)
    result.skipped = skipped
    return result


class _TaskList(list):
    skipped = ()


def _structural_key(mod):
    from rvm.ir.base import structural_equal, structural_hash

    return structural_hash(mod), lambda other: structural_equal(other, mod)
