"""The speed–quality front (report.json "front"): the candidates that no other candidate beats on dev score and
encode speed at once (Pareto-optimal), the fastest first. Speeds are compared as the measurement tells them apart
(speed.told_apart: the interquartile ranges of their interleaved rounds apart): two candidates whose speeds
overlap count as equally fast, so that of the two only the one with the higher dev score is on the front, not
both by a difference of speed within the noise.
"""

from __future__ import annotations

from sentforge.adaptation.result import CandidateResult
from sentforge.adaptation.speed import SpeedRecord, told_apart


def _beats(a: tuple[SpeedRecord, float], b: tuple[SpeedRecord, float], noise: bool = True) -> bool:
    """Whether candidate `a` (speed record, dev score) is at least as fast and as good on dev as `b`, and
    better on one; speeds within the noise of the rounds are equal unless `noise` is False."""
    if noise:
        faster = told_apart(a[0], b[0])
    else:
        faster = (a[0].texts_per_second > b[0].texts_per_second) - (a[0].texts_per_second < b[0].texts_per_second)
    return faster >= 0 and a[1] >= b[1] and (faster > 0 or a[1] > b[1])


def _points(candidates: dict[str, CandidateResult]) -> dict[str, tuple[SpeedRecord, float]]:
    return {name: (r.speed, r.dev) for name, r in candidates.items() if r.done and r.speed}


def pareto_front(candidates: dict[str, CandidateResult]) -> list[str]:
    """The finished candidates with a measured speed that no other one matches or beats on both dev score and
    texts per second (beating it on at least one), ordered from the fastest."""
    points = _points(candidates)
    front = [name for name, point in points.items()
             if not any(_beats(other, point) for o, other in points.items() if o != name)]
    return sorted(front, key=lambda n: -points[n][0].texts_per_second)


def better_and_faster(candidates: dict[str, CandidateResult], name: str) -> list[str]:
    """The candidates that keep `name` off the speed–quality front: at least as fast (speeds told apart) and as
    good on dev, and better on one of the two."""
    points = _points(candidates)
    if name not in points:
        return []
    return [o for o, other in points.items() if o != name and _beats(other, points[name])]


def off_front_within_noise(candidates: dict[str, CandidateResult]) -> dict[str, list[str]]:
    """{candidate: the candidates that keep it off the front only through speeds the measurement does not tell
    apart}: those that the medians alone would put on the front."""
    points = _points(candidates)
    front = set(pareto_front(candidates))
    noisy = {}
    for name, point in points.items():
        if name in front or any(_beats(other, point, noise=False) for o, other in points.items() if o != name):
            continue
        noisy[name] = better_and_faster(candidates, name)
    return noisy
