"""rvm.codegen"""
