"""rvm.driver"""
