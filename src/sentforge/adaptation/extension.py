"""The time left goes to the candidates the time limit cut.

Each trained candidate first gets its share of the time left when it starts, planned from the measured cost
of its steps (shares.py); a candidate that finishes its schedule early leaves time that the candidates after
it share. What is left at the end of that pass resumes the candidates whose time limit stopped them, from
their last checkpoint (the same weights as a run that never stopped), the best dev score first, until no time
or no cut candidate is left. A candidate that another finished candidate started from (TSDAE under TSDAE
then MNRL) is not extended: the later candidate would no longer start from it.
"""

from __future__ import annotations

from typing import Any

from sentforge.adaptation.candidates import Candidate

TIME_LIMIT = "time limit"


def was_cut(result: dict[str, Any]) -> bool:
    """Whether the time limit stopped a trained candidate before the end of its planned schedule."""
    return (result.get("status") == "done" and result.get("kind") == "train" and result.get("stopped") == TIME_LIMIT
            and result.get("steps", 0) < result.get("planned_steps", 0))


def cut_candidates(planned: list[Candidate], results: dict[str, dict[str, Any]]) -> list[Candidate]:
    """The cut candidates that may be extended, the most promising (highest dev score) first."""
    started_from = {c.after for c in planned
                    if c.after is not None and results.get(c.name, {}).get("status") == "done"}
    cut = [c for c in planned if c.name in results and was_cut(results[c.name]) and c.name not in started_from]
    return sorted(cut, key=lambda c: -results[c.name]["dev"])
