"""The default CPU rules (``RULES``: in the order DefaultCPUSchedule tries them)."""
from rvm.dlight.cpu.attention import AttentionScores
from rvm.dlight.cpu.conv import Window
from rvm.dlight.cpu.conv_channels import ConvChannels
from rvm.dlight.cpu.generic import Generic
from rvm.dlight.cpu.matmul import Matmul
from rvm.dlight.cpu.rules import RULES

__all__ = ["AttentionScores", "ConvChannels", "Generic", "Matmul", "RULES", "Window"]
