"""rvm.target.Target: TVM's target strings and dicts, typed attributes, the current target."""
import pytest

import rvm
from rvm.target import Target


def test_string_with_options():
    t = Target("llvm --num-cores=1")
    assert t.kind.name == "llvm" and t.attrs["num-cores"] == 1 and t.num_cores == 1
    t = Target("llvm -mcpu=skylake-avx512 -mattr=+avx2,+fma -num-cores=8")
    assert t.mcpu == "skylake-avx512"
    assert t.mattr == ["+avx2", "+fma"]
    assert t.keys == ["cpu"]
    assert Target("c").kind == "c" and Target("c").mcpu == ""


def test_dict_copy_export_and_equality():
    t = Target({"kind": "llvm", "num-cores": "4", "mcpu": "znver3"})
    assert t.attrs["num-cores"] == 4
    assert Target(t.export()) == t
    assert Target(t) == t and t == "llvm -mcpu=znver3 -num-cores=4"
    assert str(t) == "llvm -keys=cpu -mcpu=znver3 -num-cores=4"
    assert Target("llvm", host="llvm").host.kind.name == "llvm"
    assert len({Target("c"), Target("c")}) == 1


@pytest.mark.parametrize("text, message", [
    ("cuda", "unknown target 'cuda'"),
    ("", "empty target string"),
    ("llvm -foo=1", "has no attribute 'foo'"),
    ("llvm --num-cores=four", "'num-cores' expects int"),
    ("llvm mcpu", "expected '-name=value'"),
    ("llvm -system-lib=maybe", "expects bool"),
])
def test_bad_targets_say_what_is_wrong(text, message):
    with pytest.raises(ValueError, match=message):
        Target(text)


def test_bad_types():
    with pytest.raises(TypeError, match="str, dict or Target"):
        Target(3)
    with pytest.raises(ValueError, match="'kind' entry"):
        Target({"mcpu": "x"})


def test_current_target_scope():
    assert Target.current() is None
    with Target("llvm --num-cores=2") as t:
        assert Target.current() is t
        with Target("python"):
            assert Target.current().kind.name == "python"
        assert Target.current() is t
    assert Target.current() is None
    with pytest.raises(ValueError, match="no target is set"):
        Target.current(allow_none=False)


def test_builds_accept_targets():
    from rvm.driver.build_module import normalize_target

    assert normalize_target(Target("llvm -num-cores=1")) == "c"
    assert normalize_target({"kind": "python"}) == "python"
    with Target("python"):
        assert normalize_target(None) == "python"
    assert normalize_target(None) == "c"
    assert rvm.target.Target is Target
