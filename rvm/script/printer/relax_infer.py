"""What the relax printer needs to know of a binding to print it as TVM does: the struct
info TVM's printer infers for a value, and whether it is void (a void call whose variable
nobody reads prints without it; ``rvm.relax.analysis.used_vars`` says who reads it)."""
from rvm.relax import expr as _r
from rvm.relax import struct_info as _si


def inferred_sinfo(value):
    """The struct info TVM's printer infers for a binding's value (None: not inferable):
    a call of an operator or function gives its result's, a tuple its fields', a tuple item
    its field's, a variable its own; a packed call by name states none."""
    if isinstance(value, _r.Call):
        if isinstance(value.op, _r.ExternFunc):
            return None
        if value.struct_info_ is not None:
            return value.struct_info_
        return value.sinfo_args[0] if value.sinfo_args else None
    if isinstance(value, _r.Tuple):
        fields = [f.struct_info_ for f in value.fields]
        return None if any(f is None for f in fields) else _si.TupleStructInfo(fields)
    if isinstance(value, _r.TupleGetItem):
        sinfo = value.tuple_value.struct_info_
        if isinstance(sinfo, _si.TupleStructInfo) and value.index < len(sinfo.fields):
            return sinfo.fields[value.index]
        return None
    if isinstance(value, _r.Var):
        return value.struct_info_
    return None


def is_void(sinfo):
    """Whether ``sinfo`` is the empty tuple (a call that returns nothing)."""
    return isinstance(sinfo, _si.TupleStructInfo) and not sinfo.fields

