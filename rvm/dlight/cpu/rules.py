"""The default CPU rules, in the order DefaultCPUSchedule tries them."""
from rvm.dlight.cpu.attention import AttentionScores
from rvm.dlight.cpu.conv import Window
from rvm.dlight.cpu.conv_channels import ConvChannels
from rvm.dlight.cpu.generic import Generic
from rvm.dlight.cpu.matmul import Matmul

RULES = (Matmul(), ConvChannels(), Window(), AttentionScores(), Generic())
