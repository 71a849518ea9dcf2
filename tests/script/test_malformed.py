"""Malformed programs raise ParseError at the offending line, with the line and a caret.

Each program marks its offending line with ``# ERR``; the error must name
that line and contain the expected words.
"""
import pytest

from rvm.script import ParseError, from_source

from tests.script.programs import LINEAR0

PRIM_HEAD = '''
@T.prim_func
def f(A: T.Buffer((4, 4), "float32"), B: T.Buffer((4, 4), "float32")):
'''

RELAX_HEAD = '''
@I.ir_module
class Mod:
    @R.function
    def main(x: R.Tensor((2, 3), "float32")):
'''

CASES = {
    "unknown_name": (PRIM_HEAD + '''
    for i, j in T.grid(4, 4):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = Q[vi, vj]  # ERR
''', "unknown name 'Q'"),
    "wrong_arity": (PRIM_HEAD + '''
    for i in range(4):
        B[i, 0] = T.exp(A[i, 0], A[i, 1])  # ERR
''', "T.exp expects 1 argument(s), got 2"),
    "dataflow_var_escapes": (RELAX_HEAD + '''
        with R.dataflow():
            lv0 = R.call_dps_packed("env.relu", (x,), R.Tensor((2, 3), "float32"))
            gv = R.call_dps_packed("env.relu", (lv0,), R.Tensor((2, 3), "float32"))
            R.output(gv)
        return lv0  # ERR
''', "DataflowVar"),
    "bad_axis_kind": (PRIM_HEAD + '''
    for i, j in T.grid(4, 4):
        with T.block("B"):
            vi, vj = T.axis.remap("SQ", [i, j])  # ERR
            B[vi, vj] = A[vi, vj]
''', "bad axis kind 'Q'"),
    "non_constant_shape": (PRIM_HEAD + '''
    C = T.alloc_buffer((2.5, 4), "float32")  # ERR
''', "shape dimensions must be ints"),
    "non_integer_relax_dim": ('''
@R.function
def main(x: R.Tensor((1.5, 3), "float32")):  # ERR
    return x
''', "shape dimensions must be ints"),
    "unsupported_statement": (PRIM_HEAD + '''
    for i in range(4):
        try:  # ERR
            B[i, 0] = A[i, 0]
        finally:
            pass
''', "unsupported statement (Try)"),
    "unknown_T_function": (PRIM_HEAD + '''
    for i in range(4):
        B[i, 0] = T.frobnicate(A[i, 0])  # ERR
''', "unknown name 'T.frobnicate'"),
    "missing_return": (RELAX_HEAD + '''
        y = R.add(x, x)  # ERR
''', "must end with 'return"),
    "missing_output": (RELAX_HEAD + '''
        with R.dataflow():
            gv = R.add(x, x)  # ERR
        return gv
''', "must end with R.output"),
    "output_not_called": (RELAX_HEAD + '''
        with R.dataflow():
            gv = R.add(x, x)
            R.output  # ERR
        return gv
''', "must end with R.output"),
    "param_without_annotation": ('''
@T.prim_func
def f(A):  # ERR
    T.evaluate(0)
''', "needs an annotation"),
    "match_buffer_of_non_param": (PRIM_HEAD + '''
    C = T.match_buffer(B, (4, 4), "float32")  # ERR
''', "expects a T.handle parameter"),
    "remap_of_non_loop_var": (PRIM_HEAD + '''
    for i in range(4):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, 3])  # ERR
            B[vi, vj] = A[vi, vj]
''', "loop variables"),
    "call_tir_of_unknown_function": (RELAX_HEAD + '''
        cls = Mod
        y = R.call_tir(cls.nope, (x,), out_sinfo=R.Tensor((2, 3), "float32"))  # ERR
        return y
''', "no function 'nope'"),
    "wrong_index_count": (PRIM_HEAD + '''
    for i in range(4):
        B[i] = A[i, 0]  # ERR
''', "2 dimension(s), got 1 index"),
    "metadata_without_section": (RELAX_HEAD + '''
        y = R.add(x, metadata["relax.expr.Constant"][0])  # ERR
        return y
''', "show_meta=True"),
    "python_syntax_error": (PRIM_HEAD + '''
    for i in range(4)  # ERR
        B[i, 0] = A[i, 0]
''', "invalid Python syntax"),
    "branches_assign_different_names": (RELAX_HEAD + '''
        c = R.const(True, "bool")
        if c:
            y = R.add(x, x)
        else:
            z = R.multiply(x, x)  # ERR
        return y
''', "same variable"),
    "unknown_relax_operator": (RELAX_HEAD + '''
        y = R.no_such_op(x)  # ERR
        return y
''', "unknown name 'R.no_such_op'"),
    "operator_type_error": (RELAX_HEAD + '''
        y = R.add(x, R.shape([2, 3]))  # ERR
        return y
''', "relax.add"),
    "chained_comparison": (PRIM_HEAD + '''
    for i in range(4):
        if 0 < i < 3:  # ERR
            B[i, 0] = A[i, 0]
''', "chained comparisons"),
    "function_without_decorator_in_module": ('''
@I.ir_module
class Mod:
    def main(x: R.Tensor((2, 3), "float32")):  # ERR
        return x
''', "needs @T.prim_func or @R.function"),
    "reads_outside_block": (PRIM_HEAD + '''
    T.reads(A[0, 0])  # ERR
''', "only allowed inside a T.block"),
    "loop_over_list": (PRIM_HEAD + '''
    for i in [0, 1, 2]:  # ERR
        B[i, 0] = A[i, 0]
''', "unsupported loop"),
}


def _marked_line(text):
    for number, line in enumerate(text.splitlines(), start=1):
        if "# ERR" in line:
            return number, line
    raise AssertionError("no '# ERR' marker")


@pytest.mark.parametrize("name", sorted(CASES))
def test_malformed_program_points_at_its_line(name):
    text, expected = CASES[name]
    line, source_line = _marked_line(text)
    with pytest.raises(ParseError) as info:
        from_source(text, filename="bad.py")
    err = info.value
    message = str(err)
    assert expected in message
    assert err.filename == "bad.py" and err.line == line, message
    assert message.startswith(f"bad.py:{line}:{err.column}: ")
    shown, caret = message.splitlines()[1:3]
    assert shown == source_line.rstrip()
    assert caret.strip() and set(caret.strip()) == {"^"}


def test_caret_is_under_the_offending_expression():
    text = CASES["unknown_name"][0]
    with pytest.raises(ParseError) as info:
        from_source(text)
    lines = str(info.value).splitlines()
    start = lines[2].index("^")
    assert lines[1][start:start + len("Q")] == "Q"
    assert lines[2].count("^") == 1


def test_error_in_a_decorated_function_names_its_file_and_line():
    import inspect

    from rvm.script import tir as T  # noqa: F401  (the script's T namespace)

    with pytest.raises(ParseError) as info:
        @T.prim_func
        def bad(A: T.Buffer((4,), "float32")):
            for i in range(4):
                A[i] = T.no_such_intrinsic(A[i])

    err = info.value
    this_test = test_error_in_a_decorated_function_names_its_file_and_line
    assert err.filename == inspect.getsourcefile(this_test)
    assert "A[i] = T.no_such_intrinsic(A[i])" in str(err)
    source_lines, first = inspect.getsourcelines(
        test_error_in_a_decorated_function_names_its_file_and_line)
    expected = first + next(k for k, ln in enumerate(source_lines) if "no_such_intrinsic" in ln)
    assert err.line == expected


def test_linear0_text_is_well_formed():
    """The fixture that the other error tests mutate parses as it is."""
    assert from_source("@I.ir_module\nclass M:" + LINEAR0) is not None


@pytest.mark.parametrize("body", [
    "    T.evaluate()",
    "    T.func_attr()",
    "    for i in T.grid():\n        T.evaluate(0)",
    "    x: T.int32 = A",
    "    A[0, 0] = B",
])
def test_odd_statements_raise_parse_errors_not_crashes(body):
    with pytest.raises(ParseError):
        from_source(PRIM_HEAD + body + "\n")


def _mutants(text, rng, count):
    lines = text.splitlines()
    for _ in range(count):
        k = rng.randrange(len(lines))
        line = lines[k]
        toks = line.replace("(", " ( ").replace(")", " ) ").replace(",", " , ").split()
        if not toks:
            continue
        i = rng.randrange(len(toks))
        if rng.random() < 0.5:
            toks.pop(i)
        else:
            toks[i] = rng.choice(["1", "x", "T.int64()", "R.Tensor", "2.5", '"s"', "None", "[]"])
        indent = line[:len(line) - len(line.lstrip())]
        yield "\n".join(lines[:k] + [indent + " ".join(toks)] + lines[k + 1:])


def test_mutated_programs_fail_only_with_parse_errors():
    """Random token edits of valid programs either parse or raise ParseError, never crash."""
    import random

    from tests.script import programs

    rng = random.Random(1234)
    for text in (programs.MY_MODULE, programs.RELAX_FEATURES, programs.TIR_LOW_LEVEL):
        for mutant in _mutants(text, rng, 60):
            try:
                from_source(mutant)
            except ParseError:
                pass
