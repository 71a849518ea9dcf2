"""The node list of serialized TIR (rvm.tir.serialize) as an editable graph.

Nodes are ``[type, fields]`` entries whose node-valued fields are indices of earlier
entries. ``TIRGraph`` inserts nodes (renumbering every later reference), redirects
references from one node to another, and answers what a node is (expression, statement,
its dtype), so mutators can build well-typed hostile TIR that passes the decoder.

>>> from rvm.tir import Var, PrimFunc, Evaluate
>>> from rvm.tir.serialize import save_prim_funcs
>>> g = TIRGraph(save_prim_funcs([("f", PrimFunc([Var("n", "int32")], Evaluate(0)))]))
>>> [name for name, _ in g.nodes]
['Var', 'IntImm', 'Evaluate', 'PrimFunc']
"""
import msgpack

from rvm.tir.serialize import SCHEMA

_REF = ("expr", "stmt", "var", "buffer")
_REFS = ("exprs", "stmts", "vars", "call_args")
STMTS = ("LetStmt", "AssertStmt", "For", "While", "BufferStore", "Allocate", "DeclBuffer",
         "SeqStmt", "IfThenElse", "Evaluate")
_BOOL_RESULT = ("EQ", "NE", "LT", "LE", "GT", "GE", "And", "Or", "Not")


def _map_generic(value, fn):
    tag, payload = value
    if tag == "n":
        return ["n", fn(payload)]
    if tag == "l":
        return ["l", [_map_generic(v, fn) for v in payload]]
    return value


def map_refs(entry, fn, binding=True):
    """``entry`` with ``fn`` applied to each of its node references (with ``binding``
    False, not to the variables it binds or declares: a Let's or loop's variable, a
    function's parameters, a buffer's data)."""
    name, values = entry
    out = []
    for value, (_, kind) in zip(values, SCHEMA[name][1]):
        if kind in ("var", "vars") and not binding:
            pass
        elif kind in _REF or (kind == "opt_stmt" and value is not None):
            value = fn(value)
        elif kind in _REFS:
            value = [fn(v) for v in value]
        elif kind == "buffer_map":
            value = [[fn(a) if binding else a, fn(b)] for a, b in value]
        elif kind == "map":
            value = [[k, _map_generic(v, fn)] for k, v in value]
        out.append(value)
    return [name, out]


def refs_of(entry):
    """The node indices ``entry`` refers to."""
    found = []
    map_refs(entry, lambda r: found.append(r) or r)
    return found


class TIRGraph:
    """Serialized TIR decoded to its node list (``nodes``) and function table (``funcs``)."""

    def __init__(self, data):
        self.doc = msgpack.unpackb(data, raw=False)
        self.nodes = self.doc["nodes"]
        self.funcs = self.doc["funcs"]

    def to_bytes(self):
        return msgpack.packb(self.doc, use_bin_type=True)

    def indices(self, *names):
        return [i for i, (name, _) in enumerate(self.nodes) if name in names]

    def exprs(self):
        return [i for i, (name, _) in enumerate(self.nodes)
                if name not in STMTS and name not in ("Buffer", "PrimFunc")]

    def field(self, i, attr):
        name, values = self.nodes[i]
        return values[[a for a, _ in SCHEMA[name][1]].index(attr)]

    def set_field(self, i, attr, value):
        name, values = self.nodes[i]
        values[[a for a, _ in SCHEMA[name][1]].index(attr)] = value

    def dtype(self, i):
        """The dtype of expression node ``i`` (as the node constructors infer it)."""
        for _ in range(len(self.nodes)):
            name, values = self.nodes[i]
            if name in ("Var", "SizeVar"):
                return values[1]
            if name in ("IntImm", "FloatImm", "Cast", "Call"):
                return values[0]
            if name == "StringImm":
                return "handle"
            if name in _BOOL_RESULT:
                return "bool"
            if name == "BufferLoad":
                return self.field(values[0], "dtype")
            i = values[2] if name == "Let" else values[1] if name == "Select" else values[0]
        return "int32"

    def insert(self, pos, entries):
        """Inserts ``entries`` at ``pos`` (their references to nodes before ``pos`` as they
        are, to each other as ``pos + k``); returns the index of the last one."""
        shift = len(entries)

        def moved(r):
            return r + shift if r >= pos else r
        self.nodes[pos:] = [map_refs(e, moved) for e in self.nodes[pos:]]
        for f in self.funcs:
            f[1] = moved(f[1])
        self.nodes[pos:pos] = entries
        return pos + shift - 1

    def redirect(self, old, new, keep=None):
        """Uses of ``old`` in nodes after ``new`` now refer to ``new`` (each one when
        ``keep()`` says so, if given); variables stay bound where they are."""
        for i in range(new + 1, len(self.nodes)):
            self.nodes[i] = map_refs(self.nodes[i], lambda r: new if r == old and (
                keep is None or keep()) else r, binding=False)

    def users(self, i):
        return [j for j in range(i + 1, len(self.nodes)) if i in refs_of(self.nodes[j])]
