"""rvm.te"""
