"""The Ray runner and the tuner import in any order: rvm.distributed builds on
meta_schedule's runner interface, and meta_schedule never imports rvm.distributed (a module
imported first must not meet itself half-initialized). Ray itself is not needed."""
import subprocess
import sys

import pytest


@pytest.mark.parametrize("first, then", [
    ("rvm.distributed.ray_runner", "rvm.meta_schedule"),
    ("rvm.distributed", "rvm.meta_schedule.runner"),
    ("rvm.meta_schedule.runner.runner", "rvm.distributed"),
    ("rvm.meta_schedule.task_scheduler.round_robin", "rvm.distributed.ray_runner"),
])
def test_import_order_does_not_matter(first, then):
    code = (f"import {first}, {then}\n"
            "from rvm.distributed import RayRunner\n"
            "from rvm.meta_schedule.runner import Runner\n"
            "assert issubclass(RayRunner, Runner)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
