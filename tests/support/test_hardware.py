"""hardware_fingerprint: the machine (CPU model, usable cores) and the given compiler."""
import doctest
import os

from rvm.support import hardware
from rvm.support.hardware import hardware_fingerprint


class FakeCompiler:
    def __init__(self, fingerprint):
        self.fingerprint = fingerprint


def test_the_fingerprint_names_cores_and_compiler():
    fp = hardware_fingerprint(FakeCompiler("gcc 13 | x86_64 | -march=x"))
    cpu, cores, compiler = fp.split(" | ", 2)
    assert cpu and compiler == "gcc 13 | x86_64 | -march=x"
    assert cores == f"{len(os.sched_getaffinity(0))} cores"


def test_another_compiler_is_another_fingerprint():
    assert hardware_fingerprint(FakeCompiler("a")) != hardware_fingerprint(FakeCompiler("b"))


def test_the_docstring_example_runs():
    assert doctest.testmod(hardware).failed == 0
