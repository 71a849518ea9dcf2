"""The default CPU rules (``RULES``: in the order DefaultCPUSchedule tries them)."""
from rvm.dlight.cpu.generic import Generic
from rvm.dlight.cpu.rules import RULES

__all__ = ["Generic", "RULES"]
