"""Mutators of the loader and parser campaigns: raw bytes, decoded executable sections
(re-encoded with valid checksums), script text, and script syntax trees."""
import ast
import json
import struct
import zlib

import msgpack

from rvm.bytecode.serialize import _HEADER, _SECTION, SECTIONS


def mutate_bytes(rng, data):
    data = bytearray(data)
    for _ in range(rng.randint(1, 8)):
        what = rng.random()
        pos = rng.randrange(len(data)) if data else 0
        if what < 0.6 and data:
            data[pos] = rng.randrange(256)
        elif what < 0.8:
            data[pos:pos] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 8)))
        elif data:
            del data[pos:pos + rng.randint(1, 16)]
    return bytes(data)


def _mutate_value(rng, value, depth=0):
    """A random edit somewhere inside a decoded msgpack value."""
    if isinstance(value, list) and value and depth < 6:
        i = rng.randrange(len(value))
        choice = rng.random()
        if choice < 0.7:
            value[i] = _mutate_value(rng, value[i], depth + 1)
        elif choice < 0.85:
            del value[i]
        else:
            value.insert(i, _mutate_value(rng, value[i], depth + 1))
        return value
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return rng.choice([0, -1, 1, value + 1, value - 1, 1 << 31, 1 << 62, -(1 << 63),
                           (1 << 64) - 1, rng.randrange(-1000, 1000)])
    if isinstance(value, bytes):
        return mutate_bytes(rng, value) if rng.random() < 0.9 else b""
    if isinstance(value, str):
        return rng.choice(["", "main", "vm.builtin.alloc_storage", "float32", "x" * 300,
                           value + "\x00", value[::-1]])
    return rng.choice([None, 0, "", [], b"", 1.5])


def mutate_structure(rng, data):
    pos, payloads = _HEADER.size, []
    for _ in SECTIONS:
        _, length, _ = _SECTION.unpack_from(data, pos)
        pos += _SECTION.size
        payloads.append(msgpack.unpackb(data[pos:pos + length], raw=False))
        pos += length
    k = rng.randrange(len(payloads))
    if SECTIONS[k] == "modules" and payloads[k] and rng.random() < 0.7:
        payloads[k] = _mutate_kernel_library(rng, payloads[k])
    else:
        payloads[k] = _mutate_value(rng, payloads[k])
    out = [data[:_HEADER.size]]
    for index, value in enumerate(payloads):
        payload = msgpack.packb(value, use_bin_type=True)
        out.append(_SECTION.pack(index, len(payload), zlib.crc32(payload)))
        out.append(payload)
    return b"".join(out)


def _mutate_kernel_library(rng, modules):
    """Edits the header or the serialized TIR inside a kernel library blob."""
    entry = rng.choice(modules)
    blob = entry[2]
    parts, offset = [], 8
    while offset + 8 <= len(blob):
        (size,) = struct.unpack_from("<Q", blob, offset)
        parts.append(blob[offset + 8:offset + 8 + size])
        offset += 8 + size
    if len(parts) == 4:
        if rng.random() < 0.5:
            header = _mutate_value(rng, [json.loads(parts[0])])
            header = header[0] if header else {}
            parts[0] = json.dumps(header, default=lambda o: o.hex()).encode()
        else:
            try:
                tir = msgpack.unpackb(parts[2], raw=False)
                parts[2] = msgpack.packb(_mutate_value(rng, tir), use_bin_type=True)
            except Exception:
                parts[2] = mutate_bytes(rng, parts[2])
        entry[2] = blob[:8] + b"".join(struct.pack("<Q", len(p)) + p for p in parts)
    return modules


def mutate_text(rng, text):
    tokens = ["(", ")", "[", "]", ":", ",", "T.int64()", "R.Tensor", "float32", "int8", "x",
              "1" * 30, "-", "*", "\n", "    ", "T.grid(", "R.const(1e400)", "with ", "def ",
              "R.call_tir(", "T.float32(", "'", '"', "\\", "lambda", "((((((((((", "0x",
              "R.Tuple(", "T.axis.remap(", "\"float33\"", "@R.function", "@T.prim_func"]
    chars = list(text)
    for _ in range(rng.randint(1, 4)):
        pos = rng.randrange(len(chars))
        what = rng.random()
        if what < 0.4:
            chars[pos:pos + rng.randint(1, 6)] = []
        elif what < 0.8:
            chars[pos:pos] = list(rng.choice(tokens))
        else:
            chars[pos] = rng.choice("()[]:,.=+-*/ 0123456789abcxyzTR\n\"'")
    return "".join(chars)


_NAMES = ["x", "n", "cls", "R", "T", "I", "float32", "int8", "vi", "add_one", "main", "y"]
_ATTRS = ["Tensor", "call_tir", "match_buffer", "grid", "block", "axis", "remap", "matmul",
          "dataflow", "output", "const", "int64", "float32", "prim_func", "function", "add"]
_CONSTANTS = [0, -1, 1 << 63, 1e400, "float33", "", "S", None, True, 2.5, (1, 2)]


def mutate_tree(rng, text):
    """``text`` with one to three edits of its syntax tree (a name, attribute, constant or
    argument replaced, a statement deleted or duplicated), printed back: Python accepts it,
    so the mutant reaches rvm's parser."""
    tree = ast.parse(text)
    nodes = list(ast.walk(tree))
    for _ in range(rng.randint(1, 3)):
        node = rng.choice(nodes)
        if isinstance(node, ast.Name):
            node.id = rng.choice(_NAMES)
        elif isinstance(node, ast.Attribute):
            node.attr = rng.choice(_ATTRS)
        elif isinstance(node, ast.Constant):
            node.value = rng.choice(_CONSTANTS)
        elif isinstance(node, ast.Call) and node.args and rng.random() < 0.5:
            i = rng.randrange(len(node.args))
            if rng.random() < 0.5:
                del node.args[i]
            else:
                node.args.insert(i, rng.choice([a for a in nodes if isinstance(a, ast.expr)]))
        elif isinstance(node, ast.Call):
            node.keywords.append(ast.keyword(arg=rng.choice(_ATTRS),
                                             value=ast.Constant(rng.choice(_CONSTANTS))))
        elif hasattr(node, "body") and isinstance(node.body, list) and len(node.body) > 1:
            i = rng.randrange(len(node.body))
            if rng.random() < 0.5:
                del node.body[i]
            else:
                node.body.insert(i, node.body[rng.randrange(len(node.body))])
    return ast.unparse(ast.fix_missing_locations(tree))
