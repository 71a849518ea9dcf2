"""Build hook: compiles the native runtime in native/ through cffi."""
from setuptools import setup

setup(cffi_modules=["native/build_native.py:ffibuilder"])
