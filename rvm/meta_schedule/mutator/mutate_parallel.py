"""MutateParallel: another maximum parallel extent for a block's outer loops."""
from rvm.meta_schedule.mutator.mutate_categorical_annotation import MutateCategoricalAnnotation


class MutateParallel(MutateCategoricalAnnotation):
    """Another maximum parallel extent for the block's outer loops."""

    ann_keys = ("meta_schedule.parallel",)
