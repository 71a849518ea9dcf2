"""rvm.tune"""
