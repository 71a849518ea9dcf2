"""Grouping a dataflow graph into fusable groups (the partitioner behind FuseOps).

The graph: one node per value (a parameter, a binding, a constant), in an
order where producers come before consumers, each node with the fusion
pattern of the operation computing it (``OpPatternKind``) and its outgoing
edges labelled with the pattern of the consumer reading it. A node used
outside the graph (a function output) is an *external reference*: it may end
a group but never sit inside one.

The difficulty is a value read along several paths (a diamond)::

        conv2d
        /  |  \\
      op   op  op
        \\  |  /
      elementwise add

conv2d may join the add only if every path between them can be fused too. So
each node is fused, if at all, with its immediate *post-dominator* (the
nearest node every path from it goes through), found as the least common
ancestor of its consumers in the post-dominator tree; the condition is checked
on every node along the paths, and a union-find structure keeps the groups.
Three phases, as in TVM: (0) out-elementwise-fusable anchors (matmul, conv)
take their elementwise epilogues, and broadcast ops fuse forwards; (1)
injective ops fuse into what follows; (2) injective ops fuse into tuples
already fused with what follows.
"""
from rvm.relax.analysis.tir_op_pattern import OpPatternKind

ELEMWISE = OpPatternKind.ELEMWISE
BROADCAST = OpPatternKind.BROADCAST
INJECTIVE = OpPatternKind.INJECTIVE
COMM_REDUCE = OpPatternKind.COMM_REDUCE
OUT_EWISE_FUSABLE = OpPatternKind.OUT_EWISE_FUSABLE
TUPLE = OpPatternKind.TUPLE
OPAQUE = OpPatternKind.OPAQUE


class GraphNode:
    """A value of the graph: ``ref`` (what it stands for), its position ``index``, its
    ``pattern``, whether it is an ``extern_ref``, and ``outputs``: (consumer, edge pattern)."""

    __slots__ = ("ref", "index", "pattern", "extern_ref", "outputs")

    def __init__(self, ref, index, pattern, extern_ref):
        self.ref = ref
        self.index = index
        self.pattern = OpPatternKind(pattern)
        self.extern_ref = extern_ref
        self.outputs = []


class IndexedForwardGraph:
    """Nodes in producer-before-consumer order, looked up by the id of their key object.

    >>> g = IndexedForwardGraph()
    >>> a = g.add_node("a", OPAQUE, extern_ref=True)
    >>> b = g.add_node("b", ELEMWISE)
    >>> g.add_edge(a, b, ELEMWISE)
    >>> [n.ref for n in g.nodes], [c.ref for c, _ in a.outputs]
    (['a', 'b'], ['b'])
    """

    def __init__(self):
        self.nodes = []
        self.node_of = {}

    def add_node(self, ref, pattern, extern_ref=False):
        """Appends the node of ``ref`` (its key is ``id(ref)``; one node per key)."""
        if id(ref) in self.node_of:
            raise ValueError(f"graph node for {ref!r} is defined twice")
        node = GraphNode(ref, len(self.nodes), pattern, extern_ref)
        self.nodes.append(node)
        self.node_of[id(ref)] = node
        return node

    def lookup(self, ref):
        """The node of ``ref``, or None."""
        return self.node_of.get(id(ref))

    def add_edge(self, src, dst, pattern):
        """``dst`` reads ``src``; the edge carries the pattern of ``dst``."""
        src.outputs.append((dst, OpPatternKind(pattern)))


class _DomNode:
    __slots__ = ("gnode", "parent", "depth", "pattern")

    def __init__(self, gnode, parent, depth, pattern):
        self.gnode = gnode
        self.parent = parent
        self.depth = depth
        self.pattern = pattern


def _least_common_ancestor(lhs, rhs, pattern):
    while lhs is not rhs:
        if lhs is None or rhs is None:
            return None, pattern
        if lhs.depth < rhs.depth:
            pattern = max(pattern, rhs.pattern)
            rhs = rhs.parent
        elif rhs.depth < lhs.depth:
            pattern = max(pattern, lhs.pattern)
            lhs = lhs.parent
        else:
            pattern = max(pattern, lhs.pattern, rhs.pattern)
            lhs, rhs = lhs.parent, rhs.parent
    return lhs, pattern


def post_dominator_tree(graph):
    """Per node index, its node of the post-dominator tree: ``parent`` is the immediate
    post-dominator, ``pattern`` the strongest pattern on the way to it."""
    tree = [None] * len(graph.nodes)
    for gnode in reversed(graph.nodes):
        if gnode.extern_ref or not gnode.outputs:
            tree[gnode.index] = _DomNode(gnode, None, 1, OPAQUE if gnode.extern_ref else ELEMWISE)
            continue
        pattern = ELEMWISE
        parent = None
        for k, (consumer, edge_pattern) in enumerate(gnode.outputs):
            other = tree[consumer.index]
            if k == 0:
                parent = other
            else:
                parent, pattern = _least_common_ancestor(parent, other, pattern)
            pattern = max(pattern, edge_pattern)
        depth = parent.depth + 1 if parent is not None else 1
        tree[gnode.index] = _DomNode(gnode, parent, depth, pattern)
    return tree


class Group:
    """A set of nodes fused into one function (union-find; the root stands for the set)."""

    __slots__ = ("parent", "pattern", "root_ref", "anchor_ref", "num_nodes", "attrs")

    def __init__(self, pattern, root_ref):
        self.parent = None
        self.pattern = pattern
        self.root_ref = root_ref
        self.anchor_ref = root_ref if pattern == OUT_EWISE_FUSABLE else None
        self.num_nodes = 1
        self.attrs = {}

    def find_root(self):
        """The representative group, compressing the path on the way."""
        root = self
        while root.parent is not None:
            root = root.parent
        node = self
        while node is not root:
            node.parent, node = root, node.parent
        return root


class GraphPartitioner:
    """Assigns every node of a graph to a group (see the module docstring).

    ``opt_level`` 0 leaves every node alone; ``max_fuse_depth`` bounds the
    number of nodes in a group.
    """

    def __init__(self, opt_level=1, max_fuse_depth=256):
        self.opt_level = opt_level
        self.max_fuse_depth = max_fuse_depth
        self.groups = []

    def partition(self, graph):
        """The group of each node, by node index (call ``find_root()`` for the set)."""
        self.groups = [Group(n.pattern, n.ref) for n in graph.nodes]
        if self.opt_level == 0:
            return self.groups
        tree = post_dominator_tree(graph)
        for phase in range(3):
            self._run_fuse(graph, tree, phase)
        return self.groups

    # -- paths between a node and its post-dominator ---------------------------------------
    def _reachable_before(self, src, sink):
        """Nodes reachable from the consumers of ``src`` up to and including ``sink``."""
        seen, stack, order = set(), [c for c, _ in src.outputs], []
        while stack:
            node = stack.pop()
            if node.index in seen:
                continue
            seen.add(node.index)
            order.append(node)
            if node is not sink:
                stack.extend(c for c, _ in node.outputs)
        return order

    def _check_path(self, src, sink, fcond):
        return all(fcond(self.groups[n.index].find_root().pattern, n is sink)
                   for n in self._reachable_before(src, sink))

    def _merge(self, child, parent):
        child, parent = child.find_root(), parent.find_root()
        if child is parent:
            return
        parent.num_nodes += child.num_nodes
        child.parent = parent
        if child.anchor_ref is not None:
            parent.anchor_ref = child.anchor_ref
            parent.pattern = max(child.pattern, parent.pattern)

    def _commit_fuse(self, src, sink):
        target = self.groups[sink.index]
        self._merge(self.groups[src.index], target)
        for node in self._reachable_before(src, sink):
            if node is not sink:
                self._merge(self.groups[node.index], target)

    def _count_fused_nodes(self, child, dom_parent):
        total = self.groups[dom_parent.index].find_root().num_nodes
        counted = {id(self.groups[dom_parent.index].find_root())}
        for node in [child] + self._reachable_before(child, dom_parent):
            root = self.groups[node.index].find_root()
            if node is not dom_parent and id(root) not in counted:
                counted.add(id(root))
                total += root.num_nodes
        return total

    # -- the phases -------------------------------------------------------------------------
    def _run_fuse(self, graph, tree, phase):
        for gnode in graph.nodes:
            group = self.groups[gnode.index]
            dom = tree[gnode.index]
            if group.pattern == OPAQUE or dom.parent is None:
                continue
            sink = dom.parent.gnode
            if self._count_fused_nodes(gnode, sink) > self.max_fuse_depth:
                continue
            sink_group = self.groups[sink.index]
            if phase == 2:
                self._fuse_into_tuple(gnode, group, sink, sink_group)
                continue
            if group.find_root() is sink_group.find_root() or sink_group.pattern == TUPLE:
                continue
            if group.pattern == OUT_EWISE_FUSABLE:
                if phase == 0 and dom.pattern == ELEMWISE and self._check_path(
                        gnode, sink, lambda kind, is_sink: kind <= BROADCAST):
                    self._commit_fuse(gnode, sink)
            elif group.pattern <= BROADCAST:
                if dom.pattern <= INJECTIVE or dom.pattern == COMM_REDUCE:
                    if self._check_path(gnode, sink, _broadcast_path):
                        self._commit_fuse(gnode, sink)
            elif group.pattern in (INJECTIVE, TUPLE):
                if phase == 1 and self._check_path(
                        gnode, sink, lambda kind, is_sink: kind <= INJECTIVE):
                    self._commit_fuse(gnode, sink)

    def _fuse_into_tuple(self, gnode, group, sink, sink_group):
        if group.pattern > INJECTIVE:
            return
        root = sink_group.find_root()
        if root.pattern == TUPLE:
            return
        if sink_group.pattern == TUPLE and root.pattern <= INJECTIVE:
            if self._check_path(gnode, sink, lambda kind, is_sink: kind <= INJECTIVE):
                self._commit_fuse(gnode, sink)


def _broadcast_path(kind, is_sink):
    # Elementwise, broadcast and injective ops on parallel branches may join an
    # elementwise/broadcast anchor; the sink may already be any fusable group.
    if not is_sink:
        return kind <= INJECTIVE
    return kind <= INJECTIVE or kind in (COMM_REDUCE, OUT_EWISE_FUSABLE)
