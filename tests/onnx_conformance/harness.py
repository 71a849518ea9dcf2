"""Runs the onnx package's backend node tests through rvm.

The onnx package generates its node tests (a model, input and expected output
arrays, tolerances) from ``onnx.backend.test.case.node``; each test belongs to
the operator its case was written for (``test_softmax_axis_0`` and its
function-expanded twin ``test_softmax_axis_0_expanded``, or ``..._expanded_ver26`` for
the body of one opset, both test Softmax).
A test of a claimed operator is imported with ``from_onnx``, built for the C target
(``TARGET``; the ``python`` reference target is an option for debugging) and run with
every graph input fed at run time, and its outputs compared with the expected ones at
the test's own tolerances. The tests of one operator are built as the functions of one
module (``run_cases``), which shares the build's fixed costs and the C compilation.

Tests whose model inputs or outputs have an element type rvm has no dtype
for are not run, and are counted apart; tensors of strings run on the VM's
string builtins. A sequence is fed and compared as a list of arrays, an empty
optional as None. A graph input the importer needs at import
(``ConstantRequired``: an operand that decides an output's shape which its converter
cannot take at run time, such as SplitToSequence's scalar split) is bound to the
test's value as an initializer, as a deployed model holds it; such tests count as
*bound*, with the importer's reason.
"""
import re
import time
import warnings

import numpy as np

#: Where the table of pass counts lives, next to this file.
EXPECTED_FILE = "expected.json"
#: TensorProto.STRING
STRING = 8
#: The target tests build for: the compiled C path users run.
TARGET = "c"


def collect():
    """``{test name: (operator, TestCase)}`` of every bundled node test."""
    import onnx.backend.test.case.node as node_cases

    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        cases = node_cases.collect_testcases(None)
    owners = node_cases._existing_names  # test name -> the node its case was written for
    out = {}
    for case in cases:
        base = re.sub(r"_expanded(_ver\d+)?$", "", case.name)
        node = owners.get(base) or owners.get(case.name)
        if node is None:
            ops = sorted({n.op_type for n in case.model.graph.node})
            op = ops[0] if len(ops) == 1 else None
        else:
            op = node.op_type
        out[case.name] = (op, case)
    return out


def _elem_type(type_proto):
    """The tensor element type of a tensor, sequence or optional type (None otherwise)."""
    which = type_proto.WhichOneof("value")
    if which == "tensor_type":
        return type_proto.tensor_type.elem_type
    if which == "sequence_type":
        return _elem_type(type_proto.sequence_type.elem_type)
    if which == "optional_type":
        return _elem_type(type_proto.optional_type.elem_type)
    return None


def _elem_types(model):
    return [_elem_type(v.type) for v in list(model.graph.input) + list(model.graph.output)]


def why_not_run(case):
    """Why the test is outside what the importer claims, or None."""
    from rvm.relax.frontend.onnx.common import ONNX_DTYPES

    values = list(case.model.graph.input) + list(case.model.graph.output)
    kinds = sorted({v.type.WhichOneof("value") for v in values} -
                   {"tensor_type", "sequence_type", "optional_type"})
    if kinds:
        return f"{' and '.join(str(k)[:-5] for k in kinds)} values (the importer converts " \
               "tensors, sequences and optionals)"
    for elem in _elem_types(case.model):
        if elem == STRING:  # string tensors: the vm.builtin.string_* builtins
            continue
        if elem not in ONNX_DTYPES:
            import onnx

            name = onnx.TensorProto.DataType.Name(elem) if elem is not None else "non-tensor"
            return f"element type {name}"
    return None


def _bind_inputs(model, names, feeds):
    """A copy of ``model`` with the graph inputs ``names`` made initializers of ``feeds``."""
    from onnx import numpy_helper

    model = type(model).FromString(model.SerializeToString())
    for name in names:
        model.graph.initializer.append(numpy_helper.from_array(feeds[name], name))
    keep = [v for v in model.graph.input if v.name not in names]
    del model.graph.input[:]
    model.graph.input.extend(keep)
    return model


class _Prepared:
    """A test imported and ready to build: its module, arguments and expected outputs;
    ``bound`` maps the graph inputs bound as initializers to the importer's reason."""

    def __init__(self, case, mod, args, expected, bound, target):
        self.case, self.mod, self.args, self.expected = case, mod, args, expected
        self.bound, self.target = bound, target


def _prepare(case, target):
    """A _Prepared test, or ``(False, reason, bound)`` when it does not import."""
    from rvm.relax.frontend.onnx import from_onnx
    from rvm.relax.frontend.onnx.common import ConstantRequired

    inputs, expected = ([_value(v) for v in values] for values in case.data_sets[0])
    names = [v.name for v in case.model.graph.input]
    feeds = {n: _feed(v) for n, v in zip(names, inputs)}
    bound = {}
    model = case.model
    for _ in range(len(names) + 1):
        try:
            mod = from_onnx(model)
            break
        except ConstantRequired as err:
            if err.input_name in bound:
                return False, f"import: {err}", bound
            bound[err.input_name] = _bound_reason(err)
            model = _bind_inputs(case.model, list(bound), feeds)
        except Exception as err:  # noqa: BLE001 - the reason goes in the table
            return False, f"import: {type(err).__name__}: {_first_line(err)}", bound
    args = [feeds[n] for n in names if n not in bound]
    return _Prepared(case, mod, args, expected, bound, target or TARGET)


def _bound_reason(err):
    """What the importer needed at import, without the node and input names:
    "ReduceSum's axes must be known at import"."""
    text = str(err).split(": ", 1)[-1]
    return text.split(", but it is", 1)[0]


def _run_built(vm, name, test):
    """``(passed, reason, bound)`` of the test ``test`` built as the function ``name``."""
    try:
        result = vm[name](*test.args)
    except Exception as err:  # noqa: BLE001
        return False, f"build/run: {type(err).__name__}: {_first_line(err)}", test.bound
    return _compare(result, test)


def _build_one(test):
    import rvm
    from rvm import relax

    try:
        return relax.VirtualMachine(relax.build(test.mod, target=test.target), rvm.cpu()), None
    except Exception as err:  # noqa: BLE001
        return None, (False, f"build/run: {type(err).__name__}: {_first_line(err)}",
                      test.bound)


def _compare(result, test):
    case, expected, bound = test.case, test.expected, test.bound
    outputs = [result] if len(expected) == 1 else list(result)
    if len(outputs) != len(expected):
        return False, f"{len(outputs)} outputs, expected {len(expected)}", bound
    for k, (got, want) in enumerate(zip(outputs, expected)):
        reason = _differs(got, want, case)
        if reason:
            return False, f"output {k}: {reason}{_reference_note(case, k, got, want)}", bound
    return True, None, bound


def _reference_note(case, k, got, want):
    """For a float32 output that differs: whether the expected values themselves fail the
    test's comparison against onnx's reference evaluator run in float64 (every float32
    input upcast), and how far ``got`` is from that evaluation. A diagnostic for the
    failure list only: the test still fails."""
    want = np.asarray(want) if not isinstance(want, list) else None
    if want is None or want.dtype != np.float32 or not hasattr(got, "numpy"):
        return ""
    inputs = case.data_sets[0][0]
    if not any(isinstance(x, np.ndarray) and x.dtype == np.float32 for x in inputs):
        return ""
    try:
        from onnx.reference import ReferenceEvaluator

        feeds = {v.name: x.astype(np.float64) if getattr(x, "dtype", None) == np.float32
                 else x for v, x in zip(case.model.graph.input, inputs)}
        exact = np.asarray(ReferenceEvaluator(case.model).run(None, feeds)[k], np.float64)
    except Exception:  # noqa: BLE001 - no float64 evaluation: no note
        return ""
    if exact.shape != want.shape or np.allclose(exact, want, rtol=case.rtol,
                                                atol=case.atol, equal_nan=True):
        return ""
    ours = np.max(np.abs(got.numpy().astype(np.float64) - exact))
    theirs = np.max(np.abs(want.astype(np.float64) - exact))
    return (f"; the expected values themselves fail this comparison against onnx's "
            f"reference evaluated in float64 (max abs error {theirs:.3g}; rvm's {ours:.3g})")


def _differs(got, want, case):
    """Why the value ``got`` differs from the expected ``want`` (None when it matches):
    a tensor, a sequence (a list) or an empty optional (None)."""
    if want is None or got is None:
        return None if got is want else f"{_what(got)}, expected {_what(want)}"
    if isinstance(want, list):
        if hasattr(got, "numpy") or len(got) != len(want):
            return f"{_what(got)}, expected a sequence of {len(want)} tensors"
        for k, (g, w) in enumerate(zip(got, want)):
            reason = _differs(g, w, case)
            if reason:
                return f"element {k}: {reason}"
        return None
    if not hasattr(got, "numpy") and not isinstance(got, np.ndarray):
        return f"{_what(got)}, expected a tensor"
    got = got.numpy() if hasattr(got, "numpy") else got
    want = np.asarray(want)
    if got.shape != want.shape:
        return f"shape {list(got.shape)}, expected {list(want.shape)}"
    if got.dtype != want.dtype:
        return f"dtype {got.dtype}, expected {want.dtype}"
    if want.dtype.kind in "fc" or _narrow_float(want.dtype):
        if _narrow_float(want.dtype):  # ml_dtypes' floats: compared as float32
            got, want = got.astype(np.float32), want.astype(np.float32)
        ok = np.allclose(got, want, rtol=case.rtol, atol=case.atol, equal_nan=True)
    else:
        ok = np.array_equal(got, want)
    if not ok:
        if want.dtype.kind in "OSU":
            return "values differ"
        err = np.max(np.abs(got.astype("float64") - want.astype("float64")))
        return f"values differ (max abs error {err:.3g})"
    return None


def _what(value):
    if value is None:
        return "an empty optional"
    if hasattr(value, "numpy") or isinstance(value, np.ndarray):
        return "a tensor"
    return f"a sequence of {len(value)} tensors"


def run_case(case, target=None):
    """``(passed, reason, bound)``: reason is None on success, ``bound`` the graph inputs
    bound as initializers (name -> why). ``target`` None builds for ``TARGET``."""
    test = _prepare(case, target)
    if not isinstance(test, _Prepared):
        return test
    vm, failure = _build_one(test)
    return failure if vm is None else _run_built(vm, "main", test)


def run_cases(cases, target=None):
    """``[(passed, reason, bound)]`` of ``cases``, as ``run_case`` gives them, built
    together: the tests of one target whose module is ``main`` alone become the functions
    of one module, built once (shared fixed costs and kernels, one C compilation). When
    that build fails, each test is built alone, so a failure is the test's own."""
    import rvm
    from rvm import relax
    from rvm.ir.module import IRModule

    out = [None] * len(cases)
    batches = {}
    for k, case in enumerate(cases):
        test = _prepare(case, target)
        if not isinstance(test, _Prepared):
            out[k] = test
        elif len(test.mod.functions) == 1:
            batches.setdefault(test.target, []).append((k, test))
        else:
            vm, failure = _build_one(test)
            out[k] = failure if vm is None else _run_built(vm, "main", test)
    for batch_target, batch in batches.items():
        merged = IRModule()
        for k, test in batch:
            merged.add(f"case{k}", test.mod["main"].with_attr({"global_symbol": f"case{k}"}))
        try:
            vm = relax.VirtualMachine(relax.build(merged, target=batch_target), rvm.cpu())
        except Exception:  # noqa: BLE001 - each test is built alone to find its own failure
            vm = None
        for k, test in batch:
            if vm is None:
                alone, failure = _build_one(test)
                out[k] = failure if alone is None else _run_built(alone, "main", test)
            else:
                out[k] = _run_built(vm, f"case{k}", test)
    return out


def _feed(value):
    """A test input as the VM takes it: a C-contiguous array, a list of them (a sequence),
    or None (an empty optional)."""
    if value is None:
        return None
    if isinstance(value, list):
        return [_feed(v) for v in value]
    return np.array(_array(value), order="C")


def _value(value):
    """A test value: an array, a list of arrays (a sequence) or None (an empty optional)."""
    if value is None:
        return None
    if isinstance(value, list):
        return [_value(v) for v in value]
    return _array(value)


def _size(value):
    if value is None:
        return 0
    if isinstance(value, list):
        return sum(_size(v) for v in value)
    return int(np.size(_array(value)))


def _array(value):
    if hasattr(value, "SerializeToString"):  # a TensorProto
        from onnx import numpy_helper

        return numpy_helper.to_array(value)
    return np.asarray(value)


def _narrow_float(np_dtype):
    from rvm.runtime.data_type import ML_DTYPES, DataType

    return np_dtype.name in ML_DTYPES and DataType(np_dtype.name).is_float


def _first_line(err):
    text = str(err).strip().splitlines()
    line = text[0] if text else ""
    return line if len(line) < 200 else line[:197] + "..."


def run_operators(cases, ops, target=None, progress=None):
    """``{op: {"passed": [...], "failed": {name: reason}, "not_run": {name: reason},
    "bound": {name: {input: why}}}}`` for the operators ``ops``; each operator's tests are
    built together (``run_cases``)."""
    results = {op: {"passed": [], "failed": {}, "not_run": {}, "bound": {}} for op in ops}
    by_op = {}
    for name in sorted(cases):
        op, case = cases[name]
        if op in results:
            by_op.setdefault(op, []).append(name)
    for op, names in by_op.items():
        entry = results[op]
        runnable = []
        for name in names:
            skip = why_not_run(cases[name][1])
            if skip:
                entry["not_run"][name] = skip
            else:
                runnable.append(name)
        start = time.time()
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            outcomes = run_cases([cases[n][1] for n in runnable], target)
        seconds = (time.time() - start) / max(len(runnable), 1)
        for name, (passed, reason, bound) in zip(runnable, outcomes):
            if progress:
                progress(name, passed, reason, seconds)
            if bound:
                entry["bound"][name] = bound
            if passed:
                entry["passed"].append(name)
            else:
                entry["failed"][name] = reason
    return results


def unclaimed(cases, ops):
    """``{operator: test count}`` of the bundled tests whose operator is not in ``ops``
    (``None`` for the tests no single operator owns)."""
    out = {}
    for op, _ in cases.values():
        if op not in ops:
            out[op] = out.get(op, 0) + 1
    return out


def sample(expected):
    """``{op: test name}``: the first recorded passing test of each operator of
    ``expected`` (``{op: [passing test names]}``)."""
    return {op: names[0] for op, names in sorted(expected.items()) if names}
