"""rvm.topi"""
