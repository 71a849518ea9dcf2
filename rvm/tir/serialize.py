"""A stable serialized form of lowered PrimFuncs (what an executable keeps of its kernels).

``save_prim_funcs([(name, func), ...])`` gives bytes (msgpack); ``load_prim_funcs``
rebuilds the functions through the node constructors. The bytes are
untrusted: every node is one of the lowered-TIR node types listed in
``SCHEMA``, every field is checked for its kind (expression, statement,
variable, buffer, dtype, int, ...), references point only backwards (so the
graph is acyclic and decoding never recurses), and sizes are bounded: the
file size, the node count, and -- because a node may be referenced many times
and every consumer (verifier, code generator, C compiler) walks it as a tree --
each node's expanded (tree) size and nesting depth, computed as the nodes are
read (memoized per node, nothing is expanded). Names (variables, buffers,
kernels, intrinsics, attribute keys) must be printable text, and string
constants printable lines, all of bounded length (and weighed into the
expanded size): no NUL or control bytes reach generated C.
Anything else raises ``TIRFormatError`` naming the node and field.

>>> from rvm.tir import Var, PrimFunc, Evaluate
>>> f = PrimFunc([Var("n", "int32")], Evaluate(0))
>>> [(name, type(g).__name__) for name, g in load_prim_funcs(save_prim_funcs([("f", f)]))]
[('f', 'PrimFunc')]
"""
import msgpack

from rvm.ir.expr import PrimExpr
from rvm.runtime.data_type import DataType
from rvm.support.errors import RVMError
from rvm.tir import expr as E
from rvm.tir import stmt as S
from rvm.tir.buffer import Buffer
from rvm.tir.function import PrimFunc

FORMAT = 1
MAX_NODES = 1 << 22
MAX_BYTES = 1 << 28
# The largest expanded (tree) size of one node and of all the functions of a file together,
# and the deepest nesting: what code generation and the C compiler get to walk.
MAX_TREE_NODES = 1 << 16
MAX_TOTAL_TREE_NODES = 1 << 19
MAX_DEPTH = 2048
MAX_TEXT = 1 << 14
TEXT_PER_NODE = 32


class TIRFormatError(RVMError, ValueError):
    """Serialized TIR that is malformed or uses something outside the lowered-TIR subset."""


_BINARY = (E.Add, E.Sub, E.Mul, E.Div, E.Mod, E.FloorDiv, E.FloorMod, E.Min, E.Max,
           E.EQ, E.NE, E.LT, E.LE, E.GT, E.GE, E.And, E.Or)

# type name -> (class, [(attribute, kind)], constructor(*values)). Fields are saved in this
# order and passed to the constructor in this order.
SCHEMA = {
    "Var": (E.Var, [("name_hint", "str"), ("dtype", "dtype")], E.Var),
    "SizeVar": (E.SizeVar, [("name_hint", "str"), ("dtype", "dtype")], E.SizeVar),
    "IntImm": (E.IntImm, [("dtype", "dtype"), ("value", "int")], E.IntImm),
    "FloatImm": (E.FloatImm, [("dtype", "dtype"), ("value", "float")], E.FloatImm),
    "StringImm": (E.StringImm, [("value", "str")], E.StringImm),
    "Cast": (E.Cast, [("dtype", "dtype"), ("value", "expr")], E.Cast),
    "Not": (E.Not, [("a", "expr")], E.Not),
    "Select": (E.Select, [("condition", "expr"), ("true_value", "expr"),
                          ("false_value", "expr")], E.Select),
    "Let": (E.Let, [("var", "var"), ("value", "expr"), ("body", "expr")], E.Let),
    "Call": (E.Call, [("dtype", "dtype"), ("op", "str"), ("args", "call_args")], E.Call),
    "BufferLoad": (E.BufferLoad, [("buffer", "buffer"), ("indices", "exprs")], E.BufferLoad),
    "Buffer": (Buffer, [("data", "var"), ("dtype", "dtype"), ("shape", "exprs"),
                        ("strides", "exprs"), ("elem_offset", "expr"), ("name", "str"),
                        ("scope", "str")], Buffer),
    "LetStmt": (S.LetStmt, [("var", "var"), ("value", "expr"), ("body", "stmt")], S.LetStmt),
    "AssertStmt": (S.AssertStmt, [("condition", "expr"), ("message", "expr"), ("body", "stmt")],
                   S.AssertStmt),
    "For": (S.For, [("loop_var", "var"), ("min", "expr"), ("extent", "expr"), ("kind", "int"),
                    ("body", "stmt"), ("thread_binding", "none"), ("annotations", "map")],
            S.For),
    "While": (S.While, [("condition", "expr"), ("body", "stmt")], S.While),
    "BufferStore": (S.BufferStore, [("buffer", "buffer"), ("value", "expr"),
                                    ("indices", "exprs")], S.BufferStore),
    "Allocate": (S.Allocate, [("buffer_var", "var"), ("dtype", "dtype"), ("extents", "exprs"),
                              ("condition", "expr"), ("body", "stmt"), ("annotations", "map")],
                 S.Allocate),
    "DeclBuffer": (S.DeclBuffer, [("buffer", "buffer"), ("body", "stmt")], S.DeclBuffer),
    "SeqStmt": (S.SeqStmt, [("seq", "stmts")], S.SeqStmt),
    "IfThenElse": (S.IfThenElse, [("condition", "expr"), ("then_case", "stmt"),
                                  ("else_case", "opt_stmt")], S.IfThenElse),
    "Evaluate": (S.Evaluate, [("value", "expr")], S.Evaluate),
    "PrimFunc": (PrimFunc, [("params", "vars"), ("body", "stmt"), ("ret_type", "none"),
                            ("buffer_map", "buffer_map"), ("attrs", "map")], PrimFunc),
}
for _cls in _BINARY:
    SCHEMA[_cls.__name__] = (_cls, [("a", "expr"), ("b", "expr")], _cls)
_NAME_OF = {cls: name for name, (cls, _, _) in SCHEMA.items()}
_NODE_KINDS = {"expr": PrimExpr, "stmt": S.Stmt, "var": E.Var, "buffer": Buffer}


# ---- encoding ---------------------------------------------------------------------------

class _Encoder:
    def __init__(self):
        self.nodes = []
        self.index = {}

    def ref(self, node):
        known = self.index.get(id(node))
        if known is not None:
            return known
        name = _NAME_OF.get(type(node))
        if name is None:
            raise TIRFormatError(f"cannot serialize {type(node).__name__}: only lowered TIR "
                                 f"({', '.join(sorted(SCHEMA))}) is saved")
        _, fields, _ = SCHEMA[name]
        values = [self.field(getattr(node, attr), kind) for attr, kind in fields]
        self.index[id(node)] = len(self.nodes)
        self.nodes.append([name, values])
        return self.index[id(node)]

    def field(self, value, kind):
        if kind in _NODE_KINDS:
            return self.ref(value)
        if kind == "opt_stmt":
            return None if value is None else self.ref(value)
        if kind in ("exprs", "stmts", "vars", "call_args"):
            return [self.ref(v) for v in value]
        if kind == "dtype":
            return str(value)
        if kind in ("int", "float", "str"):
            return {"int": int, "float": float, "str": str}[kind](value)
        if kind == "none":
            if value is not None:
                raise TIRFormatError(f"cannot serialize a non-empty {kind} field ({value!r})")
            return None
        if kind == "buffer_map":
            return [[self.ref(var), self.ref(buf)] for var, buf in value.items()]
        if kind == "map":
            return [[str(k), self.generic(v)] for k, v in value.items()]
        raise AssertionError(kind)

    def generic(self, value):
        if value is None or isinstance(value, (bool, int, float, str)):
            return ["v", value]
        if isinstance(value, (list, tuple)):
            return ["l", [self.generic(v) for v in value]]
        if type(value) in _NAME_OF:
            return ["n", self.ref(value)]
        raise TIRFormatError(f"cannot serialize an attribute value of type "
                             f"{type(value).__name__}")


def save_prim_funcs(named_funcs):
    """The bytes of ``named_funcs`` ((name, lowered PrimFunc) pairs)."""
    enc = _Encoder()
    funcs = [[str(name), enc.ref(func)] for name, func in named_funcs]
    return msgpack.packb({"format": FORMAT, "nodes": enc.nodes, "funcs": funcs},
                         use_bin_type=True)


# ---- decoding ---------------------------------------------------------------------------

def _check_text(dec, value, what):
    """Fails unless ``value`` is printable: a name (strictly), or a message (also tabs and
    newlines), of at most MAX_TEXT characters. Text is code to generate too: every
    TEXT_PER_NODE characters weigh one node in the expanded size of the node holding it."""
    if len(value) > MAX_TEXT:
        dec.fail(f"expected a {what} of at most {MAX_TEXT} characters, found {len(value)}")
    allowed = "" if what == "name" else "\n\t"
    bad = next((ch for ch in value if not (ch.isprintable() or ch in allowed)), None)
    if bad is not None:
        dec.fail(f"expected a printable {what}, found {value[:200]!r} (contains {bad!r})")
    dec.size += len(value) // TEXT_PER_NODE


class _Decoder:
    def __init__(self, nodes):
        self.nodes = nodes
        self.built = []
        self.sizes = []    # expanded (tree) size of each built node
        self.depths = []   # nesting depth of each built node
        self.size = self.depth = 0   # of the node being built, from its references so far
        self.text = "name"  # what the str fields of the node being built are
        self.where = ""

    def fail(self, message):
        raise TIRFormatError(f"{self.where}: {message}")

    def ref(self, value, kind):
        if type(value) is not int or not 0 <= value < len(self.built):
            self.fail(f"expected a reference to an earlier node, found {value!r}")
        node = self.built[value]
        self.size += self.sizes[value]
        self.depth = max(self.depth, self.depths[value])
        want = _NODE_KINDS.get(kind, S.Stmt if kind == "stmts" else PrimExpr)
        if kind in ("vars",):
            want = E.Var
        if kind == "call_args":
            want = (PrimExpr, Buffer)
        if not isinstance(node, want):
            self.fail(f"expected {kind}, found {type(node).__name__}")
        return node

    def field(self, value, kind):
        if kind in _NODE_KINDS:
            return self.ref(value, kind)
        if kind == "opt_stmt":
            return None if value is None else self.ref(value, "stmt")
        if kind in ("exprs", "stmts", "vars", "call_args"):
            if not isinstance(value, list):
                self.fail(f"expected a list, found {type(value).__name__}")
            return [self.ref(v, kind) for v in value]
        if kind == "dtype":
            if not isinstance(value, str):
                self.fail(f"expected a dtype name, found {value!r}")
            return DataType(value)
        if kind == "int":
            if type(value) is not int:
                self.fail(f"expected an int, found {value!r}")
            return value
        if kind == "float":
            if type(value) is not float:
                self.fail(f"expected a float, found {value!r}")
            return value
        if kind == "str":
            if not isinstance(value, str):
                self.fail(f"expected a string, found {value!r}")
            _check_text(self, value, self.text)
            return value
        if kind == "none":
            if value is not None:
                self.fail(f"expected nothing, found {value!r}")
            return None
        if kind == "buffer_map":
            if not isinstance(value, list) or not all(
                    isinstance(p, list) and len(p) == 2 for p in value):
                self.fail("expected a list of (var, buffer) pairs")
            return {self.ref(v, "var"): self.ref(b, "buffer") for v, b in value}
        if kind == "map":
            if not isinstance(value, list) or not all(
                    isinstance(p, list) and len(p) == 2 and isinstance(p[0], str) for p in value):
                self.fail("expected a list of (name, value) pairs")
            for k, _ in value:
                _check_text(self, k, "name")
            return {k: self.generic(v) for k, v in value}
        raise AssertionError(kind)

    def generic(self, value):
        if not isinstance(value, list) or len(value) != 2:
            self.fail(f"malformed attribute value {value!r}")
        tag, payload = value
        if tag == "v" and (payload is None or isinstance(payload, (bool, int, float, str))):
            if isinstance(payload, str):
                _check_text(self, payload, "message")
            return payload
        if tag == "l" and isinstance(payload, list):
            return tuple(self.generic(v) for v in payload)
        if tag == "n":
            return self.ref(payload, "expr")
        self.fail(f"malformed attribute value {value!r}")

    def build(self, i, entry):
        if not isinstance(entry, list) or len(entry) != 2 or not isinstance(entry[0], str):
            self.where = f"node {i}"
            self.fail("expected [type, fields]")
        name, values = entry
        self.where = f"node {i} ({name})"
        spec = SCHEMA.get(name)
        if spec is None:
            self.fail(f"unknown node type; expected one of {', '.join(sorted(SCHEMA))}")
        _, fields, make = spec
        if not isinstance(values, list) or len(values) != len(fields):
            self.fail(f"expected {len(fields)} fields")
        self.size, self.depth = 1, 0
        self.text = "message" if name == "StringImm" else "name"
        try:
            args = [self.field(v, kind) for v, (_, kind) in zip(values, fields)]
            if name == "IntImm":
                _check_int_range(self, args[0], args[1])
            if name == "For" and args[3] not in [k.value for k in S.ForKind]:
                self.fail(f"unknown loop kind {args[3]}")
            node = make(*args)
        except TIRFormatError:
            raise
        except (TypeError, ValueError, KeyError, AttributeError, OverflowError) as err:
            self.fail(str(err))
        if self.size > MAX_TREE_NODES:
            self.fail(f"expands to more than {MAX_TREE_NODES} nodes when its shared subtrees "
                      "are repeated (expected at most that many per node)")
        if self.depth >= MAX_DEPTH:
            self.fail(f"nests deeper than {MAX_DEPTH} levels")
        self.built.append(node)
        self.sizes.append(self.size)
        self.depths.append(self.depth + 1)


def _check_int_range(dec, dtype, value):
    if dtype.lanes != 1:
        dec.fail(f"IntImm dtype {dtype} is not a scalar")
    if dtype.is_bool:
        lo, hi = 0, 1
    elif dtype.is_uint:
        lo, hi = 0, (1 << dtype.bits) - 1
    elif dtype.is_int:
        lo, hi = -(1 << (dtype.bits - 1)), (1 << (dtype.bits - 1)) - 1
    else:
        dec.fail(f"IntImm needs an integer dtype, found {dtype}")
    if not lo <= value <= hi:
        dec.fail(f"value {value} does not fit {dtype}")


def load_prim_funcs(data):
    """The (name, PrimFunc) pairs saved by ``save_prim_funcs``; TIRFormatError if malformed."""
    if not isinstance(data, (bytes, bytearray)) or len(data) > MAX_BYTES:
        raise TIRFormatError(f"serialized TIR must be bytes of at most {MAX_BYTES}")
    try:
        doc = msgpack.unpackb(bytes(data), raw=False, strict_map_key=True)
    except Exception as err:  # msgpack raises several types for malformed input
        raise TIRFormatError(f"serialized TIR is not valid msgpack: {err}") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        found = doc.get("format") if isinstance(doc, dict) else type(doc).__name__
        raise TIRFormatError(f"serialized TIR format mismatch: expected {FORMAT}, "
                             f"found {found!r}")
    nodes, funcs = doc.get("nodes"), doc.get("funcs")
    if not isinstance(nodes, list) or not isinstance(funcs, list) or len(nodes) > MAX_NODES:
        raise TIRFormatError("serialized TIR lacks its node or function list")
    dec = _Decoder(nodes)
    for i, entry in enumerate(nodes):
        dec.build(i, entry)
    out, total = [], 0
    for entry in funcs:
        dec.where = "function table"
        if not (isinstance(entry, list) and len(entry) == 2 and isinstance(entry[0], str)):
            dec.fail(f"expected [name, node], found {entry!r}")
        _check_text(dec, entry[0], "name")
        index = entry[1]
        if type(index) is not int or not 0 <= index < len(dec.built) \
                or not isinstance(dec.built[index], PrimFunc):
            dec.fail(f"function '{entry[0]}' does not refer to a PrimFunc")
        total += dec.sizes[index]
        if total > MAX_TOTAL_TREE_NODES:
            dec.fail(f"the functions expand to more than {MAX_TOTAL_TREE_NODES} nodes together "
                     "when their shared subtrees are repeated")
        func = dec.built[index]
        out.append((entry[0], func))
    return out
