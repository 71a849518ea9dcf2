"""rvm.ir"""
