"""Finding 11: a reshape between kernels is a view (``vm.builtin.reshape`` on the same
memory, no copy), and the shape of the view is a constant of the file. An edited file asking
for a view larger than the tensor it views (or with a byte size that wraps around int64, or
negative dimensions whose product matches) would let the next kernel read and write past
that memory. The builtin checks the element count in overflow-safe arithmetic and refuses
negative dimensions, so each edited file fails its call with a ValueError naming the tensor
and the shape, on both engines, and nothing is computed from the memory past it."""
import ast
import re

import numpy as np
import pytest

from rvm import relax
from rvm.bytecode.serialize import dump_executable, undump_executable
from rvm.runtime.container import ShapeTuple
from rvm.script import from_source
from tests.security.attack import ENGINES, run_untrusted

SOURCE = '''
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((4, 6), "float32"), w: R.Tensor((6, 6), "float32")):
        with R.dataflow():
            a = R.matmul(x, w)
            v = R.reshape(a, R.shape([6, 4]))
            c = R.matmul(v, R.reshape(x, R.shape([4, 6])))
            R.output(c)
        return c
'''
X = np.arange(24, dtype="float32").reshape(4, 6) / 24
W = np.eye(6, dtype="float32")


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    path = tmp_path_factory.mktemp("finding11") / "view.rvm"
    relax.build(from_source(SOURCE), target="c").export_library(str(path))
    return path.read_bytes()


def _edited(saved, tmp_path, dims):
    """The file with the shape constant of its view (6, 4) replaced by ``dims``."""
    parts = undump_executable(saved, "test")
    found = [i for i, c in enumerate(parts["constants"])
             if isinstance(c, ShapeTuple) and tuple(c) == (6, 4)]
    assert len(found) == 1, parts["constants"]
    parts["constants"][found[0]] = ShapeTuple(dims)
    path = tmp_path / "edited.rvm"
    path.write_bytes(dump_executable(parts))
    return path


@pytest.mark.parametrize("engine", ENGINES)
def test_the_file_as_built_runs_a_view(saved, tmp_path, engine):
    path = tmp_path / "view.rvm"
    path.write_bytes(saved)
    assert b"vm.builtin.reshape" in saved
    result = run_untrusted(path, [X, W], engine=engine)
    assert result.returncode == 0, result.stdout + result.stderr
    got = np.array(ast.literal_eval(result.stdout.split("RAN", 1)[1].strip()), "float32")
    np.testing.assert_allclose(got, (X @ W).reshape(6, 4) @ X, rtol=1e-5)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("dims, shown", [
    ((6, 40), r"\[6, 40\]"),                          # ten times the tensor
    ((1 << 31, 1 << 31), r"\[2147483648, 2147483648\]"),  # 2^62 elements: bytes wrap
    ((-6, -4), r"\[-6, -4\]"),                         # the right product, negative sizes
], ids=["larger", "wraps", "negative"])
def test_a_view_beyond_its_tensor_is_refused(saved, tmp_path, engine, dims, shown):
    result = run_untrusted(_edited(saved, tmp_path, dims), [X, W], engine=engine)
    assert result.returncode == 4, result.stdout + result.stderr
    assert "RAN" not in result.stdout
    assert "RUN-ERROR ValueError" in result.stdout
    assert re.search(r"reshape: cannot view float32\[4, 6\] \(24 elements\) as shape " + shown,
                     result.stdout), result.stdout
