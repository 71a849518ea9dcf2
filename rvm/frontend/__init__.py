"""rvm.frontend"""
