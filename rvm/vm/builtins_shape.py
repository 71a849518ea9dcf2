"""Shape and type builtins: checks at function entry, symbolic-shape matching, reshape.

Symbolic dimensions live in a per-call *shape heap*, an int64 tensor from
``vm.builtin.alloc_shape_heap(vm, size)``:

- ``match_shape(value, heap, ndim, kind_0, v_0, ..., kind_n-1, v_n-1[, err_ctx])``
  checks a tensor's (or shape's) dimensions one by one: ``MATCH_EQUAL_IMM``
  (dim == v), ``MATCH_STORE`` (heap[v] := dim), ``MATCH_NO_OP``,
  ``MATCH_EQUAL_HEAP`` (dim == heap[v]).
- ``make_shape(heap, ndim, kind_0, v_0, ...)`` builds a shape from immediates
  (``MAKE_IMM``) and heap slots (``MAKE_LOAD``).

Errors start with ``err_ctx`` (which function and parameter) and say what was
expected and what was found.
"""
from rvm.runtime.container import Array, ShapeTuple
from rvm.runtime.ndarray import NDArray, empty
from rvm.vm.builtin_registry import builtin

MATCH_EQUAL_IMM, MATCH_STORE, MATCH_NO_OP, MATCH_EQUAL_HEAP = 0, 1, 2, 3
MAKE_IMM, MAKE_LOAD = 0, 1


def _ctx(err_ctx, default):
    return err_ctx if err_ctx else default


@builtin("vm.builtin.alloc_shape_heap")
def alloc_shape_heap(vm, size):
    """A new int64 shape heap of ``size`` slots."""
    if size < 0:
        raise ValueError(f"alloc_shape_heap: size must be >= 0, got {size}")
    return empty((size,), "int64")


def _slots(heap, where):
    if not isinstance(heap, NDArray) or heap.dtype != "int64" or heap.ndim != 1:
        raise TypeError(f"{where}: the shape heap must be a 1-d int64 tensor, got {heap!r:.60}")
    return memoryview(heap)


def _slot(slots, index, where):
    if not 0 <= index < len(slots):
        raise ValueError(f"{where}: shape heap slot {index} out of range (size {len(slots)})")
    return index


@builtin("vm.builtin.match_shape")
def match_shape(value, heap, ndim, *codes):
    """Checks ``value``'s shape against immediates and heap slots, storing new ones."""
    err_ctx = _ctx(codes[2 * ndim] if len(codes) > 2 * ndim else "", "match_shape")
    if isinstance(value, NDArray):
        shape, what = value.shape, "tensor"
    elif isinstance(value, tuple):
        shape, what = value, "shape"
    else:
        raise TypeError(f"{err_ctx}: expected a tensor or a shape, got {type(value).__name__}")
    if len(shape) != ndim:
        raise ValueError(f"{err_ctx}: expected a {what} of rank {ndim}, got rank {len(shape)} "
                         f"(shape {list(shape)})")
    slots = None if heap is None else _slots(heap, err_ctx)
    for i in range(ndim):
        kind, v, dim = codes[2 * i], codes[2 * i + 1], shape[i]
        if kind == MATCH_EQUAL_IMM:
            if dim != v:
                raise ValueError(f"{err_ctx}: dimension {i} expected {v}, got {dim} "
                                 f"(shape {list(shape)})")
        elif kind == MATCH_STORE:
            slots[_slot(slots, v, err_ctx)] = dim
        elif kind == MATCH_EQUAL_HEAP:
            expected = slots[_slot(slots, v, err_ctx)]
            if dim != expected:
                raise ValueError(f"{err_ctx}: dimension {i} expected {expected} (bound by an "
                                 f"earlier match), got {dim} (shape {list(shape)})")
        elif kind != MATCH_NO_OP:
            raise ValueError(f"{err_ctx}: unknown match_shape kind {kind}")


@builtin("vm.builtin.match_prim_value")
def match_prim_value(value, heap, kind, v, err_ctx=""):
    """Checks an integer value (an ``R.Prim(value=n)`` argument) as ``match_shape`` checks one
    dimension: equal to an immediate, stored into a heap slot, or equal to a slot."""
    err_ctx = _ctx(err_ctx, "match_prim_value")
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{err_ctx}: expected an integer, got {type(value).__name__}")
    slots = None if heap is None else _slots(heap, err_ctx)
    if kind == MATCH_EQUAL_IMM:
        expected = v
    elif kind == MATCH_EQUAL_HEAP:
        expected = slots[_slot(slots, v, err_ctx)]
    elif kind == MATCH_STORE:
        slots[_slot(slots, v, err_ctx)] = value
        return
    elif kind == MATCH_NO_OP:
        return
    else:
        raise ValueError(f"{err_ctx}: unknown match_prim_value kind {kind}")
    if value != expected:
        raise ValueError(f"{err_ctx}: expected the value {expected}, got {value}")


@builtin("vm.builtin.make_shape")
def make_shape(heap, ndim, *codes):
    """A ShapeTuple of ``ndim`` dimensions from immediates and heap slots."""
    if len(codes) != 2 * ndim:
        raise ValueError(f"make_shape: {ndim} dimensions need {2 * ndim} codes, "
                         f"got {len(codes)}")
    slots = None if heap is None else _slots(heap, "make_shape")
    dims = []
    for i in range(ndim):
        kind, v = codes[2 * i], codes[2 * i + 1]
        if kind == MAKE_IMM:
            dims.append(v)
        elif kind == MAKE_LOAD:
            dims.append(slots[_slot(slots, v, "make_shape")])
        else:
            raise ValueError(f"make_shape: unknown kind {kind}")
    return ShapeTuple(dims)


@builtin("vm.builtin.check_tensor_info")
def check_tensor_info(arg, ndim, dtype, err_ctx=""):
    """Checks that ``arg`` is a tensor of rank ``ndim`` (-1: any) and ``dtype`` (None: any)."""
    if not isinstance(arg, NDArray):
        raise TypeError(f"{_ctx(err_ctx, 'check_tensor_info')}: expected a Tensor, "
                        f"got {type(arg).__name__}")
    if ndim != -1 and arg.ndim != ndim:
        raise ValueError(f"{_ctx(err_ctx, 'check_tensor_info')}: expected a Tensor of rank "
                         f"{ndim}, got rank {arg.ndim} ({arg.dtype}{list(arg.shape)})")
    if dtype is not None and dtype != "" and arg.dtype != dtype:
        raise ValueError(f"{_ctx(err_ctx, 'check_tensor_info')}: expected dtype {dtype}, got "
                         f"{arg.dtype}{list(arg.shape)}")


@builtin("vm.builtin.check_shape_info")
def check_shape_info(arg, ndim, err_ctx=""):
    """Checks that ``arg`` is a shape of ``ndim`` dimensions (-1: any)."""
    if not isinstance(arg, ShapeTuple):
        raise TypeError(f"{_ctx(err_ctx, 'check_shape_info')}: expected a Shape, "
                        f"got {type(arg).__name__}")
    if ndim != -1 and len(arg) != ndim:
        raise ValueError(f"{_ctx(err_ctx, 'check_shape_info')}: expected a Shape of "
                         f"{ndim} dimensions, got {list(arg)}")


@builtin("vm.builtin.check_prim_value_info")
def check_prim_value_info(arg, dtype, err_ctx=""):
    """Checks that ``arg`` is a scalar of ``dtype``'s kind (bool, integer or float; "" any)."""
    where = _ctx(err_ctx, "check_prim_value_info")
    kinds = {"bool": (bool,), "int": (int,), "uint": (int,), "float": (float, int)}
    expected = next((k for k in ("bool", "uint", "int", "float") if str(dtype).startswith(k)),
                    None)
    if isinstance(arg, NDArray) or not isinstance(arg, (bool, int, float)) or (
            expected is not None and not isinstance(arg, kinds[expected])) or (
            expected in ("int", "uint") and isinstance(arg, bool)):
        raise TypeError(f"{where}: expected a {dtype or 'scalar'} value, got "
                        f"{type(arg).__name__} {arg!r:.40}")


@builtin("vm.builtin.check_tuple_info")
def check_tuple_info(arg, size, err_ctx=""):
    """Checks that ``arg`` is a tuple of ``size`` fields (-1: any)."""
    if not isinstance(arg, (Array, tuple, list)) or isinstance(arg, ShapeTuple):
        raise TypeError(f"{_ctx(err_ctx, 'check_tuple_info')}: expected a Tuple, "
                        f"got {type(arg).__name__}")
    if size != -1 and len(arg) != size:
        raise ValueError(f"{_ctx(err_ctx, 'check_tuple_info')}: expected a Tuple of {size} "
                         f"fields, got {len(arg)}")


@builtin("vm.builtin.shape_of")
def shape_of(tensor):
    """The shape of a tensor."""
    if not isinstance(tensor, NDArray):
        raise TypeError(f"shape_of: expected a Tensor, got {type(tensor).__name__}")
    return tensor.shape


@builtin("vm.builtin.tensor_to_shape")
def tensor_to_shape(tensor):
    """The shape whose dimensions are the values of a 1-d integer tensor."""
    if not isinstance(tensor, NDArray) or tensor.ndim != 1 or not tensor.dtype.is_int:
        raise TypeError(f"tensor_to_shape: expected a 1-d integer tensor, got {tensor!r:.60}")
    return ShapeTuple(int(v) for v in tensor.numpy())


@builtin("vm.builtin.reshape")
def reshape(tensor, shape):
    """A view of ``tensor`` with ``shape`` (same number of elements)."""
    if not isinstance(tensor, NDArray):
        raise TypeError(f"reshape: expected a Tensor, got {type(tensor).__name__}")
    new = ShapeTuple(shape)
    size = 1
    for d in new:
        size *= d
    if size != tensor.size or any(d < 0 for d in new):
        raise ValueError(f"reshape: cannot view {tensor.dtype}{list(tensor.shape)} "
                         f"({tensor.size} elements) as shape {list(new)}")
    return tensor.view(new)
