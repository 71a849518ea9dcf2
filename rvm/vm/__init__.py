"""rvm.vm"""
