"""Domain adaptation end to end: run candidate recipes from one or more start encoders within a time
budget, score each on the user's dev set, keep the best model (never one below the start model)."""

from sentforge.adaptation.candidates import METHODS
from sentforge.adaptation.report import AdaptReport
from sentforge.adaptation.run import adapt

__all__ = ["METHODS", "AdaptReport", "adapt"]
