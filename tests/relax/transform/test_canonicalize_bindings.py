"""CanonicalizeBindings: uses read values where they are made, not through copies or tuples."""
from rvm.ir.base import assert_structural_equal
from rvm.script import ir as I
from rvm.script import relax as R
from rvm.relax.transform.canonicalize_bindings import CanonicalizeBindings


@I.ir_module
class Before:
    @R.function
    def main(x: R.Tensor((4,), "float32"), y: R.Tensor((4,), "float32")):
        with R.dataflow():
            a = R.add(x, y)
            t = (a, y)
            b = t[0]
            c = b
            e = t[1]
            d = R.multiply(c, e)
            gv = d
            R.output(gv, t)
        u = t[0]
        return (gv, u)


@I.ir_module
class Expected:
    @R.function
    def main(x: R.Tensor((4,), "float32"), y: R.Tensor((4,), "float32")):
        with R.dataflow():
            a = R.add(x, y)
            t = (a, y)
            b = a
            c = a
            e = y
            d = R.multiply(a, y)
            gv = d
            R.output(gv, t)
        u = t[0]
        return (gv, u)


def test_copies_and_tuple_items_read_the_value_itself():
    # gv, an output, keeps its binding; u cannot read a: a is local to the dataflow block
    assert_structural_equal(CanonicalizeBindings()(Before), Expected)


def test_a_canonical_module_is_returned_as_it_is():
    after = CanonicalizeBindings()(Before)
    assert CanonicalizeBindings()(after) is after
