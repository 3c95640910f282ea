"""The speed–quality front of the candidates: those that no other candidate beats on dev score and encode
speed at once (Pareto-optimal), the fastest first."""

from __future__ import annotations

from sentforge.adaptation.result import CandidateResult


def pareto_front(candidates: dict[str, CandidateResult]) -> list[str]:
    """The finished candidates with a measured speed that no other one matches or beats on both dev score and
    texts per second (beating it on at least one), ordered from the fastest."""
    points = {name: (r.speed["texts_per_second"], r.dev) for name, r in candidates.items() if r.done and r.speed}

    def dominated(point: tuple[float, float]) -> bool:
        return any(other[0] >= point[0] and other[1] >= point[1] and other != point for other in points.values())

    return sorted((name for name, point in points.items() if not dominated(point)), key=lambda n: -points[n][0])
