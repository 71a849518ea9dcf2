"""rvm.script"""
