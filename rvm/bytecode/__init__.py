"""rvm.bytecode: the instruction set, ExecBuilder, Executable and its file format."""
from rvm.bytecode.builder import ExecBuilder, Label
from rvm.bytecode.errors import BytecodeVerificationError, ExecutableFormatError
from rvm.bytecode.executable import Executable, load_module
from rvm.bytecode.function import FuncInfo, FuncKind
from rvm.bytecode.contract import OPCODES, ArgKind
from rvm.bytecode.instruction import Arg

__all__ = ["OPCODES", "Arg", "ArgKind", "BytecodeVerificationError", "ExecBuilder",
           "Executable", "ExecutableFormatError", "FuncInfo", "FuncKind", "Label",
           "load_module"]
