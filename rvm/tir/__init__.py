"""rvm.tir"""
