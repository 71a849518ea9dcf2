"""Summarizes a valgrind log: errors and definite leaks whose stacks pass through rvm's code.

    PYTHONMALLOC=malloc valgrind --leak-check=full --show-leak-kinds=definite \\
        --num-callers=30 python fuzz/stress.py threads --threads 2 --calls 300 2> vg.log
    python fuzz/valgrind_summary.py vg.log

rvm's code: the native runtime (rvm/runtime/_native*.so) and compiled kernels
(kernels/*.so in the compiler cache). Records elsewhere (CPython, numpy, cffi
start-up) are counted separately.
"""
import collections
import json
import re
import sys

RVM_FRAME = re.compile(r"_native[.\w-]*\.so|/kernels/[0-9a-f]{2}/|native/src/|rvm_")
KINDS = ("Invalid read", "Invalid write", "Invalid free", "Mismatched free",
         "Conditional jump", "Use of uninitialised", "Syscall param", "definitely lost")


def records(text):
    block = []
    for line in text.splitlines():
        body = re.sub(r"^==\d+==\s?", "", line)
        if not body.strip():
            if block:
                yield block
            block = []
        else:
            block.append(body)
    if block:
        yield block


def main(path):
    counts = collections.Counter()
    for block in records(open(path, errors="replace").read()):
        kind = next((k for k in KINDS if k in block[0]), None)
        if kind is None:
            continue
        where = "rvm" if any(RVM_FRAME.search(line) for line in block[1:]) else "elsewhere"
        counts[f"{kind} ({where})"] += 1
    print(json.dumps(dict(sorted(counts.items())), indent=1))
    return 1 if any(k.endswith("(rvm)") for k in counts) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
