"""``rvm.ir.save_json`` / ``rvm.ir.load_json``: IR as a JSON document (TVM's names).

The document holds the script text of the node with its metadata section
(``script(show_meta=True)``), so constants travel with it, and loading parses
that text back: a saved module loads structurally equal. Modules, PrimFuncs
and Relax functions can be saved, and so can the runtime containers of
``rvm.runtime.convert`` holding plain values (Array, Map with str keys, Int,
float, str, bool, None), as a JSON value. The script parser sits above this
layer and registers itself (``register_script_parser``) when ``rvm.script`` is
imported.

>>> from rvm.script import from_source
>>> f = from_source('''
... @T.prim_func
... def add_one(A: T.Buffer((4,), "float32")):
...     for i in range(4):
...         A[i] = A[i] + T.float32(1)
... ''')
>>> from rvm.ir import assert_structural_equal
>>> assert_structural_equal(load_json(save_json(f)), f)
"""
import json

from rvm.ir.expr import BaseFunc
from rvm.ir.module import IRModule
from rvm.runtime.container import Array, Int, Map

FORMAT = "rvm-script"
VERSION = 1
_KINDS = ("IRModule", "PrimFunc", "Function")
_VALUE = "Value"  # the document type of runtime containers
_parser = []


def _encode(value, path):
    """A JSON value for a runtime value; TypeError naming the path of anything else."""
    if value is None or isinstance(value, (bool, str, float)):
        return value
    if isinstance(value, int):
        return {"Int": int(value)}
    if isinstance(value, Array):
        return {"Array": [_encode(v, f"{path}[{i}]") for i, v in enumerate(value)]}
    if isinstance(value, Map):
        bad = [k for k in value if not isinstance(k, str)]
        if bad:
            raise TypeError(f"save_json: Map keys must be str, got {type(bad[0]).__name__} "
                            f"at {path}")
        return {"Map": [[k, _encode(v, f"{path}[{k!r}]")] for k, v in value.items()]}
    raise TypeError(f"save_json: cannot save {type(value).__name__} at {path}; containers "
                    "may hold Array, Map, int, float, str, bool and None")


def _decode(doc):
    if doc is None or isinstance(doc, (bool, str, float)):
        return doc
    if isinstance(doc, dict) and len(doc) == 1:
        (kind, body), = doc.items()
        if kind == "Int" and isinstance(body, int) and not isinstance(body, bool):
            return Int(body)
        if kind == "Array" and isinstance(body, list):
            return Array(_decode(v) for v in body)
        if kind == "Map" and isinstance(body, list) and all(
                isinstance(e, list) and len(e) == 2 and isinstance(e[0], str) for e in body):
            return Map((k, _decode(v)) for k, v in body)
    raise ValueError(f"load_json: malformed value {json.dumps(doc)[:80]}")


def register_script_parser(parse):
    """Installs ``parse(text, filename) -> node`` (the script parser) for load_json."""
    _parser[:] = [parse]
    return parse


def save_json(node):
    """The JSON text of ``node`` (an IRModule, PrimFunc or relax Function, or a runtime
    container of plain values)."""
    if isinstance(node, (Array, Map)):
        try:
            value = _encode(node, "root")
        except RecursionError:
            raise ValueError("save_json: the container is nested too deeply") from None
        return json.dumps({"format": FORMAT, "version": VERSION, "type": _VALUE,
                           "value": value})
    kind = type(node).__name__
    if not isinstance(node, (IRModule, BaseFunc)) or kind not in _KINDS:
        raise TypeError(f"save_json: expected an IRModule, PrimFunc or relax Function, got "
                        f"{kind}")
    return json.dumps({"format": FORMAT, "version": VERSION, "type": kind,
                       "script": node.script(show_meta=True)})


def load_json(text):
    """The node saved by :func:`save_json` in ``text``."""
    try:
        doc = json.loads(text)
    except (TypeError, ValueError, RecursionError) as err:
        raise ValueError(f"load_json: not a JSON document: {err}") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        found = doc.get("format") if isinstance(doc, dict) else type(doc).__name__
        raise ValueError(f"load_json: expected a document saved by rvm.ir.save_json (format "
                         f"{FORMAT!r}), got {found!r}")
    if doc.get("version") != VERSION:
        raise ValueError(f"load_json: version mismatch: file {doc.get('version')}, "
                         f"reader {VERSION}")
    if doc.get("type") == _VALUE:
        try:
            return _decode(doc.get("value"))
        except RecursionError:
            raise ValueError("load_json: the value is nested too deeply") from None
    if doc.get("type") not in _KINDS or not isinstance(doc.get("script"), str):
        raise ValueError(f"load_json: the document must name its type (one of {list(_KINDS)})"
                         " and hold its script text")
    if not _parser:
        raise RuntimeError("load_json needs the script parser, which registers itself when "
                           "the script package is imported")
    node = _parser[0](doc["script"], "<load_json>")
    if type(node).__name__ != doc["type"]:
        raise ValueError(f"load_json: the document says {doc['type']} but its text is a "
                         f"{type(node).__name__}")
    return node
