"""The function table of an executable: FuncKind and FuncInfo."""
import enum
from typing import NamedTuple


class FuncKind(enum.IntEnum):
    """How a function-table entry is implemented."""

    PACKED = 0   # resolved by name: own kernels, then imported modules, then the global registry
    VM = 1       # bytecode of this executable
    KERNEL = 2   # resolved by name among the executable's own kernel libraries only


class FuncInfo(NamedTuple):
    """One function-table entry.

    ``start``/``end`` delimit a VM function's instructions (end exclusive);
    they are 0 for the other kinds.
    """

    kind: FuncKind
    name: str
    start: int = 0
    end: int = 0
    num_args: int = 0
    num_regs: int = 0
    param_names: tuple = ()
