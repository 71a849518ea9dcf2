"""Exception types shared by every layer."""


class RVMError(RuntimeError):
    """An error reported by the native runtime or a packed function without a more specific type."""
