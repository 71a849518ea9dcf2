"""The feature-extractor interface and PerStoreFeature, the one the cost models use.

``extract_from(context, candidates)`` gives one feature vector (numpy
float32) per MeasureCandidate. PerStoreFeature lowers each candidate's
module as the builder does and describes its loop nest (see
per_store_feature).
"""
import collections
import weakref

import numpy as np

from rvm.meta_schedule.arg_info import entry_prim_func
from rvm.meta_schedule.feature_extractor.per_store_feature import (
    FEATURE_NAMES, features_of_lowered,
)
from rvm.meta_schedule.lowered import lowered_module
from rvm.meta_schedule.tune_target import num_cores

_FEATURES = weakref.WeakKeyDictionary()  # Schedule -> (IRModule then, (cores, free), vector)
# (candidate hash, cores) -> vector: the same kernel reached again (a measured record
# replayed into each batch's population, a child equal to an earlier one) is not lowered
# again. Bounded: the oldest entries go first.
_BY_HASH = collections.OrderedDict()
_BY_HASH_SIZE = 16384

class FeatureExtractor:
    """Base class: ``extract_from(context, candidates) -> [np.ndarray]``."""

    def extract_from(self, context, candidates):
        raise NotImplementedError


class PyFeatureExtractor(FeatureExtractor):
    """A feature extractor written in Python by subclassing."""


class PerStoreFeature(FeatureExtractor):
    """Loop-nest features of each candidate's lowered kernel (``FEATURE_NAMES``).

    >>> len(PerStoreFeature().feature_names) == len(FEATURE_NAMES)
    True
    """

    feature_names = FEATURE_NAMES

    def extract_from(self, context, candidates):
        target = getattr(context, "target", None)
        cores = num_cores(target) if target is not None else 1
        layout_free = tuple(getattr(context, "layout_free", ()))
        return [self._features(c.sch, cores, getattr(c, "candidate_hash", None), layout_free)
                for c in candidates]

    @staticmethod
    def _features(sch, num_cores, shash=None, layout_free=()):
        """The feature vector of a candidate schedule, as the build runs it (the packing of
        its ``layout_free`` inputs split off); its lowered module is shared with the
        builder, and the vector kept while the schedule lives: a candidate is scored,
        then used to update the model; and by the candidate's hash ``shash``, when given,
        for as long as the bounded cache keeps it."""
        cached = _FEATURES.get(sch)
        if cached is not None and cached[0] is sch.state.mod \
                and cached[1] == (num_cores, layout_free):
            return cached[2]
        key = None if shash is None else (shash, num_cores, layout_free)
        if key is not None and key in _BY_HASH:
            _BY_HASH.move_to_end(key)
            return _BY_HASH[key]
        try:
            features = features_of_lowered(entry_prim_func(lowered_module(sch, layout_free)),
                                           num_cores)
        except Exception:  # an unbuildable candidate: nothing to describe
            features = np.zeros(len(FEATURE_NAMES), dtype="float32")
        _FEATURES[sch] = (sch.state.mod, (num_cores, layout_free), features)
        if key is not None:
            _BY_HASH[key] = features
            if len(_BY_HASH) > _BY_HASH_SIZE:
                _BY_HASH.popitem(last=False)
        return features
