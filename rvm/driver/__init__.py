"""rvm.driver: the compilation entry points.

``build`` compiles PrimFuncs into a kernel library (``rvm.build``);
``relax_build`` compiles a module of Relax functions and PrimFuncs into a
bytecode Executable (``relax.build``); ``compile`` picks one of them (``rvm.compile``).
"""
from rvm.driver.build_module import build
from rvm.driver.compile import compile
from rvm.driver.relax_build import build as relax_build

__all__ = ["build", "compile", "relax_build"]
