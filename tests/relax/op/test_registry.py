import pytest

from rvm.relax.expr import Call, Var
from rvm.relax.op.registry import Op, list_op_names, register_op
from rvm.relax.struct_info import ObjectStructInfo, PrimStructInfo


def test_get_and_list():
    assert Op.get("relax.call_tir") is Op.get("relax.call_tir")
    names = list_op_names()
    for name in ("relax.call_tir", "relax.call_dps_packed", "relax.add", "relax.nn.relu",
                 "relax.nn.softmax", "relax.matmul", "relax.permute_dims", "relax.reshape"):
        assert name in names
    with pytest.raises(ValueError, match="'relax.ad' is not registered; did you mean 'relax.add'"):
        Op.get("relax.ad")


def test_register_one_op_with_inference_purity_and_attrs():
    op = register_op("test.registry.scalar", lambda call, ctx: PrimStructInfo("int64"),
                     purity=False, num_inputs=1)
    assert not op.purity
    call = Call(op, [Var("x", ObjectStructInfo())])
    assert op.infer_struct_info(call).dtype == "int64"
    with pytest.raises(ValueError, match="expects 1 argument"):
        op.infer_struct_info(Call(op, []))
    with pytest.raises(ValueError, match="already registered"):
        register_op("test.registry.scalar", lambda call, ctx: None)
    op.set_attr("FLegalize", "kept")
    again = register_op("test.registry.scalar", lambda call, ctx: ObjectStructInfo(),
                        override=True)
    assert again is op and op.purity and op.get_attr("FLegalize") == "kept"
    assert isinstance(op.infer_struct_info(call), ObjectStructInfo)
    op.set_attr("FLegalize", "rule", override=True)
    assert op.get_attr("FLegalize") == "rule" and op.get_attr("missing", 3) == 3
    with pytest.raises(ValueError, match="override=True"):
        op.set_attr("FLegalize", "other")
    op.set_attr("FLegalize", "other", override=True)
    assert op.get_attr("FLegalize") == "other"
