"""Structure-aware mutations of kernel TIR, as a hostile file would carry it.

Each mutator edits a ``TIRGraph`` (the serialized node list) in place and returns whether
it applied: narrowing lets (an index bound to a narrower variable), index arithmetic
(huge constants, products, negation, division by zero), handle and string casts mixed into
indices, dtype aliasing (a second buffer over the same data with another dtype or shape),
DAG sharing (one subtree referenced 2^k times), ``call_packed`` of registered global names,
allocations of huge, zero or negative sizes, loops with huge extents, other kinds or nests
of unrolled loops, swapped buffers and variables, and edits of constants, dtypes, names and
statement sequences. The nodes built are well typed where the node constructors check, so
most mutants pass the decoder and reach the code generator, the compiler and the kernels.

>>> import random
>>> from rvm.tir import Var, PrimFunc, Evaluate
>>> from rvm.tir.serialize import save_prim_funcs, load_prim_funcs
>>> g = TIRGraph(save_prim_funcs([("f", PrimFunc([Var("n", "int32")], Evaluate(0)))]))
>>> mutate(random.Random(0), g, ["vm.builtin.copy"]) != []
True
>>> [name for name, _ in load_prim_funcs(g.to_bytes())]
['f']
"""
from fuzz.tir_graph import STMTS, TIRGraph, map_refs  # noqa: F401 (TIRGraph: the doctest)

INT_DTYPES = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")
DTYPES = INT_DTYPES + ("bool", "float16", "float32", "float64", "bfloat16", "float8_e4m3fn",
                       "int4", "handle", "float32x4", "int64x2")
BIG = (1 << 62, (1 << 63) - 1, -(1 << 63), (1 << 31) - 1, 1 << 31, (1 << 32) + 1, -1, -2,
       1 << 40, 65535, 255, 0)
HOSTILE_STRINGS = ("%s%s%s%n", "{0.__class__.__mro__}", "{0.__init__.__globals__}", "x" * 4096,
                   "a\x00b", "\\\"); system(\"id", "%d%d%d%d", "\u202e\ud7ff")
INTRINSICS = ("tir.exp", "tir.sqrt", "tir.call_packed", "tir.call_extern", "tir.if_then_else",
              "tir.reinterpret", "tir.address_of", "tir.isnan", "tir.popcount", "tir.bogus")


def fit(value, dtype):
    """``value`` wrapped into the range of integer ``dtype`` (so the decoder accepts it)."""
    if dtype == "bool":
        return value & 1
    if dtype.startswith(("int", "uint")):
        bits = int("".join(c for c in dtype.split("x")[0] if c.isdigit()) or 32)
    else:  # a float or odd dtype: any value a file can hold (msgpack's int64 range)
        dtype, bits = "int64", 64
    value &= (1 << bits) - 1
    if dtype.startswith("int") and value >= 1 << (bits - 1):
        value -= 1 << bits
    return value


def _is_int(dtype):
    return dtype in INT_DTYPES


def _index_sites(g):
    """(load or store node, index expression node) of every buffer index."""
    return [(i, ref) for i in g.indices("BufferLoad", "BufferStore")
            for ref in g.field(i, "indices")]


def _pick_index(rng, g):
    sites = [(n, e) for n, e in _index_sites(g) if _is_int(g.dtype(e))]
    return rng.choice(sites) if sites else (None, None)


def _const(dtype, value):
    return ["IntImm", [dtype, fit(value, dtype)]]


def narrowing_let(rng, g):
    store, e = _pick_index(rng, g)
    if e is None:
        return False
    narrow = rng.choice(INT_DTYPES + ("bool",))
    wide = g.dtype(e)
    if rng.random() < 0.5 or g.nodes[store][0] != "BufferStore":
        pos = e + 1
        entries, value = [], e
        if rng.random() < 0.4 and narrow != "bool":
            # a constant the narrow type cannot hold: in range as written, not once truncated
            bits = int("".join(c for c in narrow if c.isdigit()))
            entries.append(_const(wide, rng.randrange(1 << (bits - 1), 3 << (bits - 1))))
            value = pos
        entries.append(["Var", ["t", narrow]])
        var = body = pos + len(entries) - 1
        if rng.random() < 0.6:
            entries.append(["Cast", [wide, var]])
            body = var + 1
        entries.append(["Let", [var, value, body]])
        g.redirect(e, g.insert(pos, entries), keep=lambda: rng.random() < 0.8)
        return True
    pos = store + 1  # LetStmt t = e (or a constant t cannot hold); the store indexed by t
    entries, value = [], e
    if rng.random() < 0.4 and narrow != "bool":
        bits = int("".join(c for c in narrow if c.isdigit()))
        entries.append(_const(wide, rng.randrange(1 << (bits - 1), 3 << (bits - 1))))
        value = pos
    var = pos + len(entries)
    copy = map_refs(g.nodes[store], lambda r: var if r == e else r, binding=False)
    entries += [["Var", ["t", narrow]], copy, ["LetStmt", [var, value, var + 1]]]
    g.redirect(store, g.insert(pos, entries))
    return True


def index_arithmetic(rng, g):
    _, e = _pick_index(rng, g)
    if e is None:
        return False
    dt, pos = g.dtype(e), e + 1
    op = rng.choice(["Mul", "Add", "Sub", "neg", "square", "FloorDiv", "FloorMod", "Div", "Mod",
                     "Min", "Max"])
    value = rng.choice(BIG)
    if op == "neg":
        entries = [_const(dt, 0), ["Sub", [pos, e]]]
    elif op == "square":
        entries = [["Mul", [e, e]]]
    else:
        if op in ("FloorDiv", "FloorMod", "Div", "Mod") and rng.random() < 0.5:
            value = rng.choice([0, -1])
        entries = [_const(dt, value), [op, [e, pos] if rng.random() < 0.8 else [pos, e]]]
    g.redirect(e, g.insert(pos, entries), keep=lambda: rng.random() < 0.8)
    return True


def pointer_cast(rng, g):
    _, e = _pick_index(rng, g)
    if e is None:
        return False
    dt, pos = g.dtype(e), e + 1
    handles = [i for i in g.indices("Var") if i < pos and g.dtype(i) == "handle"]
    if handles and rng.random() < 0.6:
        entries = [["Cast", [dt, rng.choice(handles)]]]
    else:
        entries = [["StringImm", [rng.choice(HOSTILE_STRINGS)]], ["Cast", [dt, pos]]]
    entries.append(["Add", [e, pos + len(entries) - 1]])
    g.redirect(e, g.insert(pos, entries))
    return True


def dtype_alias(rng, g):
    buffers = g.indices("Buffer")
    if not buffers:
        return False
    b = rng.choice(buffers)
    name, values = g.nodes[b]
    alias = [name, list(values)]
    entries = []
    what = rng.random()
    if what < 0.6:
        alias[1][1] = rng.choice(DTYPES)
    elif what < 0.8:
        dt = g.dtype(values[2][0]) if values[2] else "int64"
        entries.append(_const(dt, rng.choice(BIG)))
        alias[1][2] = [b + 1] + values[2][1:]
    else:
        dt = g.dtype(values[4])
        entries.append(_const(dt, rng.choice(BIG)))
        alias[1][4] = b + 1
    entries.append(alias)
    g.redirect(b, g.insert(b + 1, entries), keep=lambda: rng.random() < 0.7)
    return True


def dag_sharing(rng, g):
    exprs = [i for i in g.exprs() if g.dtype(i) not in ("bool", "handle")]
    if not exprs:
        return False
    e = rng.choice(exprs)
    # Mostly within the decoder's expanded-size cap (2^16 nodes per node), so the sharing
    # reaches the verifier and codegen; sometimes far past it, to attack the cap itself.
    depth = rng.randint(4, 14) if rng.random() < 0.75 else rng.randint(15, 64)
    entries = [["Add", [e, e]]] + [["Add", [e + k, e + k]] for k in range(1, depth)]
    g.redirect(e, g.insert(e + 1, entries), keep=lambda: rng.random() < 0.5)
    return True


def packed_call(rng, g, names):
    stmts = g.indices(*STMTS)
    if not stmts or not names:
        return False
    s = rng.choice(stmts)
    pos = s + 1
    candidates = [i for i in g.indices("Buffer") + g.exprs() if i < s]
    args = [rng.choice(candidates) for _ in range(rng.randint(0, 3)) if candidates]
    entries = [["StringImm", [rng.choice(names)]],
               ["Call", ["int32", "tir.call_packed", [pos] + args]],
               ["Evaluate", [pos + 1]],
               ["SeqStmt", [[pos + 2, s] if rng.random() < 0.5 else [s, pos + 2]]]]
    g.redirect(s, g.insert(pos, entries))
    return True


def allocation(rng, g):
    allocs = g.indices("Allocate")
    if not allocs:
        return False
    a = rng.choice(allocs)
    extents = g.field(a, "extents")
    if rng.random() < 0.2 or not extents:
        g.set_field(a, "dtype", rng.choice(DTYPES))
        return True
    k = rng.randrange(len(extents))
    dt = g.dtype(extents[k])
    g.insert(a, [_const(dt, rng.choice(BIG))])
    g.field(a + 1, "extents")[k] = a
    return True


def loops(rng, g):
    fors = g.indices("For")
    what = rng.random()
    if fors and what < 0.4:
        f = rng.choice(fors)
        dt = g.dtype(g.field(f, "loop_var"))
        g.insert(f, [_const(dt, rng.choice(BIG))])
        g.set_field(f + 1, rng.choice(["extent", "extent", "min"]), f)
        if rng.random() < 0.3:
            g.set_field(f + 1, "kind", 3)
        return True
    if fors and what < 0.7:
        g.set_field(rng.choice(fors), "kind", rng.choice([0, 1, 2, 3, 4]))
        return True
    stmts = g.indices(*STMTS)
    if not stmts:
        return False
    s = rng.choice(stmts)  # a nest of unrolled loops around a statement
    for _ in range(rng.randint(1, 4)):
        pos = s + 1
        entries = [["Var", ["u", "int32"]], ["IntImm", ["int32", 0]],
                   ["IntImm", ["int32", rng.choice([64, 256, 1 << 20])]],
                   ["For", [pos, pos + 1, pos + 2, 3, s, None, []]]]
        new = g.insert(pos, entries)
        g.redirect(s, new)
        s = new
    return True


def swap_buffers(rng, g):
    users = g.indices("BufferLoad", "BufferStore")
    if not users:
        return False
    n = rng.choice(users)
    others = [b for b in g.indices("Buffer") if b < n]
    if not others:
        return False
    g.set_field(n, "buffer", rng.choice(others))
    return True


def swap_vars(rng, g):
    variables = g.indices("Var", "SizeVar")
    users = [n for n in g.exprs() + g.indices(*STMTS)
             if any(r in variables for r in _refs(g, n))]
    if not users:
        return False
    n = rng.choice(users)
    old = rng.choice([r for r in _refs(g, n) if r in variables])
    choices = [v for v in variables if v < n and v != old]
    same = [v for v in choices if g.dtype(v) == g.dtype(old)]
    if same and rng.random() < 0.8:
        choices = same
    if not choices:
        return False
    new = rng.choice(choices)
    g.nodes[n] = map_refs(g.nodes[n], lambda r: new if r == old else r)
    return True


def _refs(g, n):
    found = []
    map_refs(g.nodes[n], lambda r: found.append(r) or r)
    return found


def tweak(rng, g):
    i = rng.randrange(len(g.nodes))
    name, values = g.nodes[i]
    if name == "IntImm":
        values[1] = fit(rng.choice(BIG), values[0]) if rng.random() < 0.9 else rng.choice(BIG)
    elif name in ("Var", "SizeVar", "Cast"):
        values[1 if name != "Cast" else 0] = rng.choice(DTYPES)
    elif name == "FloatImm":
        values[1] = rng.choice([float("nan"), float("inf"), -0.0, 1e308, 3.4e38 * 2])
    elif name == "Call":
        values[1] = rng.choice(INTRINSICS)
    elif name == "StringImm":
        values[0] = rng.choice(HOSTILE_STRINGS)
    elif name == "Buffer":
        values[rng.choice([5, 6])] = rng.choice(HOSTILE_STRINGS + ("local", "shared", "global"))
    elif name == "SeqStmt" and values[0]:
        seq = values[0]
        k = rng.randrange(len(seq))
        rng.choice([lambda: seq.insert(k, seq[k]), lambda: seq.pop(k), seq.reverse])()
    elif name == "For":
        values[6] = values[6] + [[rng.choice(["pragma_unroll_explicit", "rvm.simd_reduction",
                                              "pragma_auto_unroll_max_step"]),
                                  ["v", rng.choice([1 << 20, -1, "x", 64])]]]
    else:
        return False
    return True


MUTATORS = (narrowing_let, index_arithmetic, pointer_cast, dtype_alias, dag_sharing,
            packed_call, allocation, loops, swap_buffers, swap_vars, tweak)


def mutate(rng, g, names):
    """Applies one to three mutators to ``g`` (``names``: global function names a
    ``call_packed`` may target); the names of those that applied."""
    applied = []
    for _ in range(rng.randint(1, 3)):
        for _ in range(10):
            fn = rng.choice(MUTATORS)
            done = fn(rng, g, names) if fn is packed_call else fn(rng, g)
            if done:
                applied.append(fn.__name__)
                break
    return applied
