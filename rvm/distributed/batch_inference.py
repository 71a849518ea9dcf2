"""Batch inference of a saved executable over a Ray Dataset: ``map_batches``.

What travels to the workers is the executable file's bytes, put in Ray's
object store once. Each worker actor loads them with the loader's checks
(header, sections, the bytecode verifier, kernels recompiled from their
source), builds one VirtualMachine and calls one function of it on every
batch it gets. Before any batch runs, one worker loads the executable the
same way, so a damaged or hostile file fails the call with the loader's own
error. Python functions registered with ``rvm.register_func`` in the driver
do not travel: register them on the workers with ``setup``.

>>> # ds = ray.data.from_numpy(x)                          # one column, "data"
>>> # out = rvm.distributed.map_batches("model.rvm", ds, batch_size=512, num_workers=2)
>>> # y = np.concatenate([b["output"] for b in out.iter_batches(batch_format="numpy")])
"""
import os
import warnings

import numpy as np

from rvm.bytecode.executable import Executable
from rvm.bytecode.function import FuncKind
from rvm.runtime.container import Array
from rvm.runtime.device import cpu
from rvm.runtime.ndarray import NDArray
from rvm.support.optional import import_optional
from rvm.vm.machine import VirtualMachine

_WHERE = "executable sent to map_batches"


def _ray():
    return import_optional("ray", "distributed", "rvm.distributed.map_batches")


def executable_bytes(executable):
    """The file contents of ``executable``: an Executable, a path to a ``.rvm`` file, or
    the bytes of one."""
    if isinstance(executable, Executable):
        return executable.save_to_bytes()
    if isinstance(executable, (bytes, bytearray, memoryview)):
        return bytes(executable)
    if isinstance(executable, (str, os.PathLike)):
        with open(executable, "rb") as f:
            return f.read()
    raise TypeError(f"map_batches expects an Executable, a path to a .rvm file or its bytes, "
                    f"got {type(executable).__name__}")


def load_vm(data, fn, engine=None, setup=None):
    """A VirtualMachine over the executable in ``data`` (verified as any file is), after
    ``setup()``; ValueError if it has no function ``fn``. Returns (vm, param_names)."""
    if setup is not None:
        setup()
    ray = import_optional("ray", "distributed", "rvm.distributed.map_batches")
    if isinstance(data, ray.ObjectRef):
        data = ray.get(data)
    ex = Executable.from_bytes(data, where=_WHERE)
    functions = {f.name: f for f in ex.func_table if f.kind == FuncKind.VM}
    if fn not in functions:
        raise ValueError(f"map_batches: the executable has no Relax function '{fn}'; it has: "
                         f"{', '.join(functions) or 'none'}")
    vm = VirtualMachine(ex, cpu(), engine=engine)
    return vm, list(functions[fn].param_names)


def check_on_worker(data, fn, engine, setup):
    """A Ray task's body: loads the executable as the actors will; its parameter names."""
    return load_vm(data, fn, engine, setup)[1]


class VirtualMachinePredictor:
    """The callable class Ray Data runs in each actor: one VirtualMachine per actor.

    Built from the executable's bytes (resolved by Ray from the object store);
    each call takes a numpy batch (a dict of columns), passes
    ``input_columns`` (default: every column, in order) to ``fn`` as its
    arguments and returns the outputs as ``output_columns`` (default
    ``["output"]`` for one output, ``output_0, output_1, ...`` for a tuple).
    """

    def __init__(self, data, fn="main", input_columns=None, output_columns=None, engine=None,
                 setup=None):
        self.vm, self.param_names = load_vm(data, fn, engine, setup)
        self.fn = fn
        self.func = self.vm[fn]
        self.input_columns = None if input_columns is None else list(input_columns)
        self.output_columns = None if output_columns is None else list(output_columns)

    def __call__(self, batch):
        columns = self.input_columns or list(batch)
        missing = [c for c in columns if c not in batch]
        if missing:
            raise KeyError(f"map_batches: the batch has no column {missing[0]!r}; it has: "
                           f"{', '.join(map(str, batch))}")
        rows = len(batch[columns[0]]) if columns else 0
        out = self.func(*[np.ascontiguousarray(batch[c]) for c in columns])
        outputs = list(out) if isinstance(out, (Array, tuple, list)) else [out]
        arrays = [o.numpy() if isinstance(o, NDArray) else np.asarray(o) for o in outputs]
        names = self.output_columns or (
            ["output"] if len(arrays) == 1 else [f"output_{i}" for i in range(len(arrays))])
        if len(names) != len(arrays):
            raise ValueError(f"map_batches: '{self.fn}' returned {len(arrays)} outputs but "
                             f"output_columns names {len(names)}: {names}")
        for name, a in zip(names, arrays):
            if a.ndim == 0 or a.shape[0] != rows:
                raise ValueError(f"map_batches: output {name!r} of '{self.fn}' has shape "
                                 f"{list(a.shape)}; expected one row per input row ({rows})")
        return dict(zip(names, arrays))


def map_batches(executable, dataset, fn="main", *, batch_size=1024, num_workers=1,
                input_columns=None, output_columns=None, engine=None, setup=None,
                num_cpus=1, retries=3, **ray_remote_args):
    """Runs ``fn`` of ``executable`` over ``dataset`` (a ``ray.data.Dataset``) in batches.

    ``executable`` is an Executable, a path to a ``.rvm`` file, or its bytes;
    its bytes go to the object store once. ``num_workers`` actors (each
    holding ``num_cpus`` CPUs) load it, verified, and keep one
    VirtualMachine each. Batches of ``batch_size`` rows come in as numpy
    columns: ``input_columns`` (default: all, in order) are ``fn``'s
    arguments, its outputs are the columns ``output_columns`` of the result.
    ``setup`` (a picklable function) runs on each worker before loading, to
    register the Python functions the executable calls. Further keyword
    arguments go to ``Dataset.map_batches`` (``ray_remote_args``).

    A worker that dies (killed, out of memory, a crash) is restarted, and
    the batch it held runs again, up to ``retries`` times per batch; a batch
    that still kills its worker then fails the iteration with Ray's error
    for the lost actor instead of running again forever (Ray Data's own
    default). ``max_task_retries`` / ``max_restarts`` in ``ray_remote_args``
    override this.

    One worker loads the executable first: an executable the loader rejects
    raises its error here, before any batch runs. Returns the (lazy) result
    Dataset; its rows follow the input's where Ray Data keeps order
    (``DataContext.execution_options.preserve_order``).
    """
    ray = _ray()
    import_optional("ray.data", "distributed", "rvm.distributed.map_batches")
    if not isinstance(dataset, ray.data.Dataset):
        raise TypeError(f"map_batches expects a ray.data.Dataset, got "
                        f"{type(dataset).__name__}")
    if int(num_workers) < 1 or int(batch_size) < 1:
        raise ValueError(f"map_batches needs num_workers >= 1 and batch_size >= 1, got "
                         f"{num_workers} and {batch_size}")
    if isinstance(retries, bool) or not isinstance(retries, int) or retries < 0:
        raise ValueError(f"map_batches: retries must be an int >= 0, got {retries!r}")
    if setup is not None and not callable(setup):
        raise TypeError(f"map_batches: setup must be callable, got {type(setup).__name__}")
    data_ref = ray.put(executable_bytes(executable))
    check = ray.remote(check_on_worker).options(num_cpus=num_cpus, max_retries=0)
    try:
        params = ray.get(check.remote(data_ref, fn, engine, setup))
    except ray.exceptions.RayTaskError as err:
        raise err.cause from None  # the loader's own error, as a local load would raise it
    if input_columns is not None and len(list(input_columns)) != len(params):
        raise ValueError(f"map_batches: '{fn}' takes {len(params)} arguments "
                         f"({', '.join(params)}) but input_columns names "
                         f"{len(list(input_columns))}: {list(input_columns)}")
    remote_args = {"max_restarts": -1, "max_task_retries": retries, **ray_remote_args}
    with warnings.catch_warnings():
        if not ray_remote_args:
            # Ray Data names no parameter for retries, so they go as ray_remote_args, which
            # it calls deprecated: a warning about this call, not about the user's.
            warnings.filterwarnings("ignore", message="`ray_remote_args` is deprecated")
        return dataset.map_batches(
            VirtualMachinePredictor, batch_size=int(batch_size), batch_format="numpy",
            compute=ray.data.ActorPoolStrategy(size=int(num_workers)), num_cpus=num_cpus,
            fn_constructor_args=(data_ref, fn, input_columns, output_columns, engine, setup),
            **remote_args)
