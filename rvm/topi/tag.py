"""The tags topi's operators carry on their compute ops (``Tensor.op.tag``), with TVM's
names and values, and the predicates schedules use to group operators.

>>> from rvm import te, topi
>>> x = te.placeholder((2, 3), name="x")
>>> is_injective(topi.exp(x).op.tag), is_broadcast(topi.reshape(x, (3, 2)).op.tag)
(True, False)
"""
ELEMWISE = "elemwise"
BROADCAST = "broadcast"
INJECTIVE = "injective"
COMM_REDUCE = "comm_reduce"
COMM_REDUCE_IDX = "comm_reduce_idx"


def is_broadcast(tag):
    """Whether ``tag`` is elementwise or broadcast (or a tag starting with one of them)."""
    return tag.startswith((ELEMWISE, BROADCAST))


def is_injective(tag):
    """Whether ``tag`` is injective: each output element reads fixed input positions
    (elementwise, broadcast and layout operators)."""
    return tag.startswith((ELEMWISE, BROADCAST, INJECTIVE))
