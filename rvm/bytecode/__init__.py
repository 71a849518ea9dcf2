"""rvm.bytecode"""
