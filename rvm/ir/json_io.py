"""``rvm.ir.save_json`` / ``rvm.ir.load_json``: IR as a JSON document (TVM's names).

The document holds the script text of the node with its metadata section
(``script(show_meta=True)``), so constants travel with it, and loading parses
that text back: a saved module loads structurally equal. Modules, PrimFuncs
and Relax functions can be saved. The script parser sits above this layer and
registers itself (``register_script_parser``) when ``rvm.script`` is imported.

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

FORMAT = "rvm-script"
VERSION = 1
_KINDS = ("IRModule", "PrimFunc", "Function")
_parser = []


def register_script_parser(parse):
    """Installs ``parse(text, filename) -> node`` (the script parser) for load_json."""
    _parser[:] = [parse]
    return parse


def save_json(node):
    """The JSON text of ``node`` (an IRModule, PrimFunc or relax Function)."""
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
    except (TypeError, ValueError) as err:
        raise ValueError(f"load_json: not a JSON document: {err}") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        found = doc.get("format") if isinstance(doc, dict) else type(doc).__name__
        raise ValueError(f"load_json: expected a document saved by rvm.ir.save_json (format "
                         f"{FORMAT!r}), got {found!r}")
    if doc.get("version") != VERSION:
        raise ValueError(f"load_json: version mismatch: file {doc.get('version')}, "
                         f"reader {VERSION}")
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
