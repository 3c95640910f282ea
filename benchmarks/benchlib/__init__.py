"""What the scripts in benchmarks/ share; a library, not a benchmark. A script of benchmarks/KIND/ puts
benchmarks/ on the import path before importing it (`sys.path.insert(0, ...parents[1])`: running a script
puts only its own folder there; tests add benchmarks/ themselves):

- here: the paths (the repository, and the data and models beside it in ../shared) and bad input (`fail`);
- `benchlib.device`: the device line above a timing table (`print_device`), device syncs;
- `benchlib.data`: the raw STS-B test pairs and their Spearman, the two real sentence models of this
  machine, the similar pairs of a dev file (the explanation benchmarks);
- `benchlib.drivers`: the plumbing of the resumable experiment drivers (experiments/: PAUSE,
  Sentence-T5, TSDAE), many runs of (train with the CLI, evaluate) in one work directory.
"""

from __future__ import annotations

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SHARED = REPO.parent / "shared"  # the data and models beside the repository
DATA = SHARED / "data"


def fail(message: str) -> None:
    """Bad input: one `error:` line and exit code 2."""
    print(f"error: {message}", file=sys.stderr)
    sys.exit(2)
