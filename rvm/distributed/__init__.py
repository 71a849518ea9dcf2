"""rvm.distributed: rvm on a Ray cluster (needs ``pip install 'rvm[distributed]'``).

``map_batches(executable, dataset)`` runs an executable over a
``ray.data.Dataset`` on worker actors, one VirtualMachine each.
``RayRunner`` measures tuning candidates on the cluster's workers (a
``meta_schedule`` Runner: ``ms.tune_tir(..., runner=RayRunner())``).

This package is a facade; the definitions live in its modules.
"""
from rvm.distributed.batch_inference import VirtualMachinePredictor, map_batches
from rvm.distributed.ray_runner import RayRunner

__all__ = ["RayRunner", "VirtualMachinePredictor", "map_batches"]
