"""Pass, PassContext, Sequential, instruments and pipelines."""
import pytest

from rvm.ir.module import IRModule
from rvm.ir.transform import (ModulePass, PassContext, PassInfo, PassInstrument, Sequential,
                              get_pass, get_pipeline, module_pass, register_pass,
                              register_pipeline)


def _tagging_pass(tag, opt_level=0, required=()):
    @module_pass(opt_level=opt_level, name=tag, required=required)
    def tag_module(mod, ctx):
        return mod.with_attr("trail", mod.get_attr("trail", ()) + (tag,))

    return tag_module


def trail(mod):
    return mod.get_attr("trail", ())


def test_module_pass_runs_and_returns_new_module():
    mod = IRModule()
    out = _tagging_pass("A")(mod)
    assert trail(out) == ("A",) and trail(mod) == ()


def test_sequential_order_and_opt_level():
    seq = Sequential([_tagging_pass("A"), _tagging_pass("B", opt_level=3), _tagging_pass("C")])
    assert trail(seq(IRModule())) == ("A", "C")  # default opt_level is 2
    with PassContext(opt_level=3):
        assert trail(seq(IRModule())) == ("A", "B", "C")
    with PassContext(opt_level=0, required_pass=["B"], disabled_pass=["C"]):
        assert trail(seq(IRModule())) == ("A", "B")


def test_direct_call_ignores_opt_level():
    with PassContext(opt_level=0):
        assert trail(_tagging_pass("B", opt_level=3)(IRModule())) == ("B",)


def test_required_passes_come_from_the_registry():
    register_pass("test.Required", lambda: _tagging_pass("test.Required"))
    seq = Sequential([_tagging_pass("D", required=["test.Required"])])
    assert trail(seq(IRModule())) == ("test.Required", "D")
    with pytest.raises(ValueError, match="no pass named 'test.Missing'"):
        get_pass("test.Missing")


def test_instruments_see_every_pass_and_can_skip():
    events = []

    class Recorder(PassInstrument):
        def enter_pass_ctx(self):
            events.append("enter")

        def exit_pass_ctx(self):
            events.append("exit")

        def should_run(self, mod, info):
            return info.name != "skipme"

        def run_before_pass(self, mod, info):
            events.append(("before", info.name))

        def run_after_pass(self, mod, info):
            events.append(("after", info.name))

    with PassContext(instruments=[Recorder()]):
        out = Sequential([_tagging_pass("A"), _tagging_pass("skipme")], name="outer")(IRModule())
    assert trail(out) == ("A",)
    assert events == ["enter", ("before", "outer"), ("before", "A"), ("after", "A"),
                      ("after", "outer"), "exit"]


def test_class_decorator():
    @module_pass(opt_level=1, name="Renamer")
    class Renamer:
        def __init__(self, value):
            self.value = value

        def transform_module(self, mod, ctx):
            return mod.with_attr("value", self.value)

    p = Renamer(7)
    assert isinstance(p, ModulePass) and p.info.name == "Renamer"
    assert p(IRModule()).get_attr("value") == 7


def test_bad_uses():
    with pytest.raises(TypeError, match="expects an IRModule"):
        _tagging_pass("A")("not a module")
    bad = ModulePass(lambda mod, ctx: None, PassInfo(0, "Bad"))
    with pytest.raises(TypeError, match="pass Bad returned NoneType"):
        bad(IRModule())
    with pytest.raises(TypeError, match="Sequential expects passes"):
        Sequential([lambda m: m])
    with pytest.raises(TypeError, match="must be PassInstrument"):
        PassContext(instruments=[object()])


def test_pipelines():
    register_pipeline("test.pipe", lambda: Sequential([_tagging_pass("P")]))
    assert trail(get_pipeline("test.pipe")(IRModule())) == ("P",)
    with pytest.raises(ValueError, match="unknown pipeline 'nope'"):
        get_pipeline("nope")
