"""JSONDatabase: workloads by structural hash and records in JSON lines, reloadable."""
import json

import pytest

from rvm.ir.module import IRModule
from rvm.ir.base import structural_equal
from rvm.meta_schedule.arg_info import TensorInfo
from rvm.meta_schedule.database import (
    JSONDatabase, MemoryDatabase, TuningRecord, Workload, workload_module,
)
from rvm.runtime.compiler import default_compiler
from rvm.script import ir as I, tir as T  # noqa: E741
from rvm.support.hardware import hardware_fingerprint
from tests.meta_schedule import kernels

LOCAL = hardware_fingerprint(default_compiler())  # this machine's


@I.ir_module
class Matmul:
    @T.prim_func
    def main(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128, 128), "float32"),
             C: T.Buffer((128, 128), "float32")):
        T.func_attr({"global_symbol": "main", "tir.noalias": True})
        for i, j, k in T.grid(128, 128, 128):
            with T.block("C"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    C[vi, vj] = T.float32(0)
                C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]


TRACE = [[["GetBlock", [], ["C", "main"], ["b0"]]], []]  # JSON as a Trace writes it
ARGS = [TensorInfo("float32", [128, 128])] * 3


def _record(workload, secs, fingerprint=None, **kw):
    return TuningRecord(TRACE, workload, secs, "llvm --num-cores=1", ARGS,
                        fingerprint or LOCAL, **kw)


def test_records_survive_a_reload(tmp_path):
    db = JSONDatabase(work_dir=tmp_path)
    workload = db.commit_workload(Matmul)
    db.commit_tuning_record(_record(workload, [2e-5, 3e-5], candidate_hash=7))
    db.commit_tuning_record(_record(workload, None, error_msg="timed out after 1 s",
                                    candidate_hash=8))
    db.commit_tuning_record(_record(workload, [1e-5], candidate_hash=9))

    again = JSONDatabase(work_dir=tmp_path)
    assert len(again) == 3 and again.has_workload(Matmul)
    (loaded,) = again.workloads
    assert loaded.shash == workload.shash and structural_equal(loaded.mod, workload.mod)
    records = again.records_of(loaded)
    assert [r.candidate_hash for r in records] == [7, 8, 9]
    assert records[1].error_msg == "timed out after 1 s" and not records[1].is_valid
    assert records[0].args_info == ARGS and records[0].target == "llvm --num-cores=1"
    assert records[0].trace_json == TRACE
    best = again.get_top_k(loaded, 5)
    assert [r.candidate_hash for r in best] == [9, 7]
    assert again.query_tuning_record(Matmul).candidate_hash == 9


def test_a_kernel_is_one_workload_whatever_its_name(tmp_path):
    db = MemoryDatabase()
    db.commit_workload(Matmul)
    renamed = Matmul["main"].with_attr("global_symbol", "linear0")
    assert db.has_workload(renamed)
    assert workload_module(renamed)["main"].get_attr("global_symbol") == "main"
    assert not db.has_workload(kernels.Copy)
    assert db.commit_workload(renamed) is db.commit_workload(Matmul)
    assert len(db.workloads) == 1


def test_times_are_compared_on_one_hardware_only():
    db = MemoryDatabase()
    workload = db.commit_workload(Matmul)
    db.commit_tuning_record(_record(workload, [1e-6], fingerprint="another machine"))
    db.commit_tuning_record(_record(workload, [5e-5], candidate_hash=1))
    assert [r.candidate_hash for r in db.get_top_k(workload, 2)] == [1]
    assert db.get_top_k(workload, 2, fingerprint="another machine")[0].run_secs == [1e-6]
    other = MemoryDatabase()
    w = other.commit_workload(Matmul)
    other.commit_tuning_record(_record(w, [1e-6], fingerprint="another machine"))
    assert len(other.get_top_k(w, 1)) == 1  # no local records: the most common hardware


def test_a_damaged_line_is_skipped_with_a_warning(tmp_path):
    db = JSONDatabase(work_dir=tmp_path)
    workload = db.commit_workload(Matmul)
    db.commit_tuning_record(_record(workload, [1e-5]))
    with open(db.path_tuning_record, "a") as f:
        f.write('[0, {"trace": [[["GetBl')  # a run killed while writing
    with pytest.warns(RuntimeWarning, match=r"database_tuning_record.json:2: skipping"):
        again = JSONDatabase(work_dir=tmp_path)
    assert len(again) == 1


def test_files_hold_json_lines(tmp_path):
    db = JSONDatabase(work_dir=tmp_path)
    workload = db.commit_workload(Matmul)
    db.commit_tuning_record(_record(workload, [1e-5]))
    (line,) = db.path_workload.read_text().splitlines()
    shash, text = json.loads(line)
    assert shash == str(workload.shash) and "T.block(\"C\")" in text
    (line,) = db.path_tuning_record.read_text().splitlines()
    index, body = json.loads(line)
    assert index == 0 and body["run_secs"] == [1e-5] and body["trace"] == TRACE


def test_bad_inputs(tmp_path):
    with pytest.raises(FileNotFoundError, match="allow_missing=False"):
        JSONDatabase(work_dir=tmp_path / "nothing", allow_missing=False)
    with pytest.raises(ValueError, match="needs work_dir"):
        JSONDatabase()
    db = MemoryDatabase()
    with pytest.raises(ValueError, match="commit_workload"):
        db.commit_tuning_record(_record(Workload(workload_module(Matmul)), [1e-5]))
    with pytest.raises(ValueError, match="a workload is"):
        Workload.from_json(["x", 1])
    with pytest.raises(ValueError, match="one PrimFunc"):
        workload_module(IRModule())


def test_current_database():
    db = MemoryDatabase()
    assert MemoryDatabase.current() is None
    with db:
        assert MemoryDatabase.current() is db
    assert MemoryDatabase.current() is None
