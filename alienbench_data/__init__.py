"""AlienBench data package: build, load, validate, version and publish the dataset."""

from .config import benchmark, judge_config
from .errors import AlienbenchError, DatasetError, OfflineError, Problem, ReleaseError
from .loader import load, manifest_of
from .schema import CONDITIONS, CONFIGS, DIM_COLUMNS, DIMENSIONS, PARAPHRASES, SPLITS

__version__ = "0.1.0"

__all__ = [
    "CONDITIONS",
    "CONFIGS",
    "DIMENSIONS",
    "DIM_COLUMNS",
    "PARAPHRASES",
    "SPLITS",
    "AlienbenchError",
    "DatasetError",
    "OfflineError",
    "Problem",
    "ReleaseError",
    "__version__",
    "benchmark",
    "judge_config",
    "load",
    "manifest_of",
]
