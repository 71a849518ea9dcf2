"""MutateUnroll: another maximum unroll step for a block's inner loops."""
from rvm.meta_schedule.mutator.mutate_categorical_annotation import MutateCategoricalAnnotation


class MutateUnroll(MutateCategoricalAnnotation):
    """Another maximum unroll step for the block's inner loops."""

    ann_keys = ("meta_schedule.unroll_explicit", "meta_schedule.unroll_implicit")
