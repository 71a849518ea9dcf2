"""Instructions of a schedule trace, and the table of instruction kinds.

Every primitive a Schedule runs is recorded as an ``Instruction``: its kind,
its ``inputs`` (handles and numbers), its ``attrs`` (plain values), and the
handles it returned (``outputs``). One table, ``KINDS``, says for each kind
which Schedule method runs it and how its parameters are laid out; replaying,
printing as Python and JSON serialization all walk that table.

A parameter is an ``input`` (a handle or a number), ``inputs`` (a list of
them, printed as a keyword list: ``factors=[v4, v5]``), ``varargs`` (a list
printed positionally: ``sch.reorder(l1, l6, l3, l7)``) or an ``attr``.
"""
ONE, MANY = "one", "many"


class Param:
    """One parameter of an instruction kind's method: ``name`` and its ``role``."""

    __slots__ = ("name", "role")

    def __init__(self, name, role):
        self.name = name
        self.role = role

    @property
    def is_input(self):
        return self.role in ("input", "inputs", "varargs")


def _params(spec):
    """``"block loop attr:n inputs:factors"`` -> Params (no prefix means an input)."""
    out = []
    for word in spec.split():
        role, _, name = word.rpartition(":")
        out.append(Param(name, role or "input"))
    return tuple(out)


class InstructionKind:
    """A kind of instruction: its ``name`` (TVM's), the Schedule ``method`` running it, its
    parameters, whether it is pure (no effect on the IR: removable when its outputs are
    unused), whether it takes a random ``decision``, and what it returns (ONE, MANY, None)."""

    def __init__(self, name, method, params, outputs=None, pure=False, decision=False):
        self.name = name
        self.method = method
        self.params = _params(params)
        self.outputs = outputs
        self.is_pure = pure
        self.has_decision = decision
        lists = [p for p in self.params if p.role in ("inputs", "varargs")]
        inputs = [p for p in self.params if p.is_input]
        assert not lists or inputs[-1] is lists[0], f"{name}: a list input must come last"

    def split_args(self, inputs, attrs):
        """{parameter name: value} from an instruction's flat inputs and attrs."""
        inputs, attrs = list(inputs), list(attrs)
        out = {}
        for p in self.params:
            if p.role == "input":
                out[p.name] = inputs.pop(0)
            elif p.role in ("inputs", "varargs"):
                out[p.name], inputs = inputs, []
            else:
                out[p.name] = attrs.pop(0)
        return out

    def apply(self, sch, inputs, attrs, decision):
        """Runs the instruction on ``sch`` (inputs already translated): its outputs."""
        args = self.split_args(inputs, attrs)
        positional = []
        for p in self.params:
            if p.role == "varargs":
                positional = args.pop(p.name)
        if self.has_decision:
            args["decision"] = decision
        result = getattr(sch, self.method)(*positional, **args)
        if self.outputs is None:
            return []
        return [result] if self.outputs == ONE else list(result)

    def __repr__(self):
        return f"InstructionKind({self.name!r})"


_KIND_LIST = [
    InstructionKind("GetBlock", "get_block", "attr:name attr:func_name", ONE, pure=True),
    InstructionKind("GetLoops", "get_loops", "block", MANY, pure=True),
    InstructionKind("GetChildBlocks", "get_child_blocks", "block_or_loop", MANY, pure=True),
    InstructionKind("GetProducers", "get_producers", "block", MANY, pure=True),
    InstructionKind("GetConsumers", "get_consumers", "block", MANY, pure=True),
    InstructionKind("Split", "split",
                    "loop inputs:factors attr:preserve_unit_iters attr:disable_predication",
                    MANY),
    InstructionKind("Fuse", "fuse", "varargs:loops attr:preserve_unit_iters", ONE),
    InstructionKind("Reorder", "reorder", "varargs:ordered_loops"),
    InstructionKind("AddUnitLoop", "add_unit_loop", "block_or_loop", ONE),
    InstructionKind("Parallel", "parallel", "loop"),
    InstructionKind("Vectorize", "vectorize", "loop"),
    InstructionKind("Unroll", "unroll", "loop"),
    InstructionKind("Annotate", "annotate", "block_or_loop attr:ann_key ann_val"),
    InstructionKind("Unannotate", "unannotate", "block_or_loop attr:ann_key"),
    InstructionKind("DecomposeReduction", "decompose_reduction", "block loop", ONE),
    InstructionKind("RFactor", "rfactor", "loop attr:factor_axis", ONE),
    InstructionKind("CacheRead", "cache_read", "block attr:read_buffer_index "
                    "attr:storage_scope inputs:consumer_blocks", ONE),
    InstructionKind("CacheWrite", "cache_write", "block attr:write_buffer_index "
                    "attr:storage_scope inputs:consumer_blocks", ONE),
    InstructionKind("ComputeAt", "compute_at",
                    "block loop attr:preserve_unit_loops attr:index"),
    InstructionKind("ReverseComputeAt", "reverse_compute_at",
                    "block loop attr:preserve_unit_loops attr:index"),
    InstructionKind("ComputeInline", "compute_inline", "block"),
    InstructionKind("ReverseComputeInline", "reverse_compute_inline", "block"),
    InstructionKind("TransformLayout", "transform_layout", "block attr:buffer attr:index_map "
                    "attr:pad_value attr:assume_injective_transform"),
    InstructionKind("PartitionRows", "partition_rows", "attr:depth attr:rows attr:keep"),
    InstructionKind("PartitionInnermost", "partition_innermost", "attr:nest attr:width"),
    InstructionKind("PadColumns", "pad_columns", "block attr:read_buffer_index attr:width"),
    InstructionKind("SamplePerfectTile", "sample_perfect_tile",
                    "loop attr:n attr:max_innermost_factor", MANY, pure=True, decision=True),
    InstructionKind("SampleCategorical", "sample_categorical", "attr:candidates attr:probs",
                    ONE, pure=True, decision=True),
    InstructionKind("SampleComputeLocation", "sample_compute_location", "block", ONE,
                    pure=True, decision=True),
    InstructionKind("EnterPostproc", "enter_postproc", ""),
]
KINDS = {kind.name: kind for kind in _KIND_LIST}


def get_kind(name):
    """The InstructionKind named ``name`` (ValueError listing the known kinds otherwise)."""
    kind = KINDS.get(name)
    if kind is None:
        raise ValueError(f"unknown instruction kind {name!r}; expected one of "
                         f"{', '.join(sorted(KINDS))}")
    return kind


class Instruction:
    """One recorded primitive: ``kind`` (an InstructionKind), ``inputs``, ``attrs``,
    ``outputs`` (the handles it returned)."""

    __slots__ = ("kind", "inputs", "attrs", "outputs")

    def __init__(self, kind, inputs, attrs, outputs):
        self.kind = get_kind(kind) if isinstance(kind, str) else kind
        self.inputs = list(inputs)
        self.attrs = list(attrs)
        self.outputs = list(outputs)

    def __repr__(self):
        return f"Instruction({self.kind.name}, inputs={self.inputs}, attrs={self.attrs})"
