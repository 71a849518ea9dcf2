"""rvm.transform"""
