"""rvm.distributed: running executables on a Ray cluster (needs ``pip install 'rvm[distributed]'``).

``map_batches(executable, dataset)`` runs an executable over a
``ray.data.Dataset`` on worker actors, one VirtualMachine each. Tuning on a
cluster is ``rvm.meta_schedule.runner.RayRunner``.

This package is a facade; the definitions live in its modules.
"""
from rvm.distributed.batch_inference import VirtualMachinePredictor, map_batches

__all__ = ["VirtualMachinePredictor", "map_batches"]
