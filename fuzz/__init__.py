"""Fuzzing and stress harnesses (run as scripts: ``python fuzz/fuzz_loader.py``, ...)."""
