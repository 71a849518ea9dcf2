"""rvm.driver: the compilation entry points.

``build`` compiles PrimFuncs into a kernel library (``rvm.build``);
``relax_build`` compiles a module of Relax functions and PrimFuncs into a
bytecode Executable (``relax.build``).
"""
from rvm.driver.build_module import build
from rvm.driver.relax_build import build as relax_build

__all__ = ["build", "relax_build"]
