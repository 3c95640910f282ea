"""SetFit's pairs and the class-group batches: seeded, balanced, and every pair or group where it belongs."""

from __future__ import annotations

from collections import Counter

from sentforge.data.class_batches import ClassGroupSampler
from sentforge.data.class_pairs import class_pairs

EXAMPLES = [(f"text {i}", f"c{i % 5}") for i in range(23)]
LABEL = dict(EXAMPLES)


def test_pairs_are_balanced_seeded_and_labelled_by_class():
    pairs = class_pairs(EXAMPLES, iterations=3, seed=1)
    assert len(pairs) == 2 * 3 * len(EXAMPLES) and Counter(score for *_, score in pairs) == {1.0: 69, 0.0: 69}
    assert all((LABEL[a] == LABEL[b]) == (score == 1.0) and a != b for a, b, score in pairs)
    assert pairs == class_pairs(EXAMPLES, iterations=3, seed=1) != class_pairs(EXAMPLES, iterations=3, seed=2)


def test_class_group_batches_pair_every_text_with_its_class():
    labels = [label for _, label in EXAMPLES]
    sampler = ClassGroupSampler(labels, iterations=4, seed=0)
    batches = sampler.batches(8)
    assert batches.shape == (4 * 23 // 8, 8)
    assert (batches == ClassGroupSampler(labels, iterations=4, seed=0).batches(8)).all()
    order = sampler.order()
    assert Counter(order.tolist()) == {i: 4 for i in range(23)}  # every text once per round
    with_partner = [sum(labels[j] == labels[i] for j in batch) > 1 for batch in batches for i in batch]
    assert sum(with_partner) / len(with_partner) > 0.8
