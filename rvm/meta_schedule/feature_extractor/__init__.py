"""rvm.meta_schedule.feature_extractor: what the cost model sees of a candidate.

This package is a facade; the definitions live in its modules.
"""
from rvm.meta_schedule.feature_extractor.feature_extractor import (
    FeatureExtractor, PerStoreFeature, PyFeatureExtractor,
)

__all__ = ["FeatureExtractor", "PerStoreFeature", "PyFeatureExtractor"]
