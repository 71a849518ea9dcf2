"""rvm.relax"""
