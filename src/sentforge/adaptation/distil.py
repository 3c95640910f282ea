"""Distilling the leading meta-embedding into one encoder.

A meta-embedding needs all its members at inference and loads only in sentforge. When one leads on dev,
its best member (by dev score) learns the meta vectors of the unlabelled texts by MSE, with a Dense
layer to the meta dimension (the `distil` recipe): one sentence-transformers model, scored like every
other candidate.
"""

from __future__ import annotations

from sentforge.adaptation.result import CandidateResult


def distil_plan(results: dict[str, CandidateResult]) -> tuple[str | None, str | None, str]:
    """(the meta-embedding to distil, the member candidate to start from, why not when they are None)."""
    done = {name: r for name, r in results.items() if r.done}
    leader = max(done, key=lambda name: done[name].dev)
    if done[leader].kind != "meta":
        return None, None, f"{leader}, not a meta-embedding, leads on dev"
    members = [name for name in done[leader].members or [] if name in done]
    if not members:
        return None, None, f"{leader} has no trained or start candidate among its members"
    return leader, max(members, key=lambda name: done[name].dev), ""
