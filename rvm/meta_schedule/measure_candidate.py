"""MeasureCandidate: a schedule picked for measurement, with its kernel's arguments."""


class MeasureCandidate:
    """``sch`` (a Schedule whose ``mod`` is the candidate) and ``args_info`` (TensorInfos)."""

    def __init__(self, sch, args_info):
        self.sch = sch
        self.args_info = list(args_info)

    def __repr__(self):
        return f"MeasureCandidate({len(self.args_info)} args)"
