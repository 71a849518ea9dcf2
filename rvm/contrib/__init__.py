"""rvm.contrib: bridges to other libraries under TVM's names (``tvm.contrib``):
``rvm.contrib.dlpack`` wraps functions for PyTorch tensors."""
