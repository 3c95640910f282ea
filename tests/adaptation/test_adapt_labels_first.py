"""The default rule, "labels-first", on hand-made per-unit dev scores (every paired interval known by
construction): within the noise of the dev leader a candidate that learnt from the labelled pairs is preferred
to one that learnt from unlabelled text alone, then simplest's preferences apply; and under every interval rule
racing's verdict stands (a candidate stopped as significantly below another is not chosen in its place)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from sentforge.adaptation.result import RaceDecision
from sentforge.adaptation.select import DEFAULT_RULE, learns_from_labels, select
from sentforge.evaluation.paired import PairedInterval

from selection_tables import BASE, L6, SWING, table

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def qatar_living_like():
    """The shape of a 60-minute Qatar Living run: tsdae+mnrl leads on dev, simcse (one stage, unsupervised) and
    mnrl (one stage, labelled) are within its noise, ct is significantly below it."""
    return table({"l6.start": (BASE, L6, 0), "l6.tsdae+mnrl": (BASE + 4.5 + 4 * SWING, L6, 88),
                  "l6.simcse": (BASE + 3.0 - 4 * SWING, L6, 32), "l6.mnrl": (BASE + 2.9 - 4 * SWING, L6, 40),
                  "l6.ct": (BASE + 1.0, L6, 40)})


def test_the_default_rule_is_labels_first():
    assert DEFAULT_RULE == "labels-first"


def test_within_the_noise_a_candidate_trained_on_the_labels_is_preferred_to_an_unsupervised_one():
    results, items = qatar_living_like()
    simplest = select(results, ["l6.start"], "simplest", items)
    assert simplest.leader == "l6.tsdae+mnrl" and simplest.chosen == "l6.simcse"  # the higher dev of two 1-stage ones
    chosen = select(results, ["l6.start"], "labels-first", items)
    # Of the label-trained candidates within the noise, simplest's preference: mnrl, one training stage.
    assert chosen.leader == "l6.tsdae+mnrl" and chosen.chosen == "l6.mnrl"
    assert chosen.why.startswith("l6.mnrl is chosen over the dev leader l6.tsdae+mnrl, which is not significantly "
                                 "better: l6.mnrl costs less (made in 1 training stage instead of 2)")
    assert "over l6.simcse; l6.simcse learnt from unlabelled text alone, l6.tsdae+mnrl learnt from the labelled" \
        in chosen.why
    # Without mnrl, the leader itself is the label-trained one: simcse, unsupervised, never replaces it.
    del results["l6.mnrl"], items["l6.mnrl"]
    chosen = select(results, ["l6.start"], "labels-first", items)
    assert chosen.chosen == "l6.tsdae+mnrl"
    assert chosen.why.startswith("l6.tsdae+mnrl is chosen: the highest dev score")


def test_an_unsupervised_leader_gives_way_to_a_labelled_candidate_within_its_noise_but_not_beyond():
    results, items = table({"l6.start": (BASE, L6, 0), "l6.simcse": (BASE + 4.0 + 4 * SWING, L6, 40),
                            "l6.mnrl": (BASE + 3.0 - 4 * SWING, L6, 40)})
    chosen = select(results, ["l6.start"], "labels-first", items)
    assert chosen.leader == "l6.simcse" and chosen.chosen == "l6.mnrl"
    assert "l6.mnrl learnt from the labelled pairs and l6.simcse did not" in chosen.why
    results, items = table({"l6.start": (BASE, L6, 0), "l6.simcse": (BASE + 4.0, L6, 40),
                            "l6.mnrl": (BASE + 3.0, L6, 40)})
    assert select(results, ["l6.start"], "labels-first", items).chosen == "l6.simcse"  # significantly better


def test_what_counts_as_learning_from_the_labels():
    results, _ = table({"l6.start": (BASE, L6, 0), "l6.mnrl": (BASE, L6, 1), "l6.pause": (BASE, L6, 1),
                        "l6.simcse": (BASE, L6, 1), "l6.tsdae": (BASE, L6, 1), "l6.augsbert": (BASE, L6, 1),
                        "meta-concat": (BASE, L6, 0), "meta-gcca": (BASE, L6, 0)})
    results["meta-concat"] = results["meta-concat"].update(members=["l6.simcse", "l6.mnrl"])
    results["meta-gcca"] = results["meta-gcca"].update(members=["l6.simcse", "l6.tsdae"])
    results["l6.mnrl.continued"] = results["l6.simcse"].update(method="mnrl", continues="l6.mnrl")
    results["distil"] = results["l6.tsdae"].update(kind="distil", method="distil", member="l6.mnrl")
    assert {name: learns_from_labels(results, name) for name in results} == {
        "l6.start": False, "l6.mnrl": True, "l6.pause": True, "l6.simcse": False, "l6.tsdae": False,
        "l6.augsbert": True, "meta-concat": True, "meta-gcca": False, "l6.mnrl.continued": True, "distil": True}


@pytest.mark.parametrize("rule", ["simplest", "significant", "labels-first"])
def test_a_candidate_racing_stopped_below_the_leader_is_not_chosen_through_an_earlier_checkpoint(rule):
    # simcse's kept checkpoint is within the leader's noise, but racing stopped it later as significantly below.
    results, items = table({"l6.start": (BASE, L6, 0), "l6.tsdae+mnrl": (BASE + 4.5 + 4 * SWING, L6, 88),
                            "l6.simcse": (BASE + 3.0 - 4 * SWING, L6, 48)})
    behind = PairedInterval(-5.62, -9.50, -1.89, 1.9, 0.95, 1000, 43)
    verdict = RaceDecision("below the leader", "l6.tsdae+mnrl", behind, 40.1, 48)
    results["l6.simcse"] = results["l6.simcse"].update(race=verdict)
    chosen = select(results, ["l6.start"], rule, items)
    assert chosen.chosen == "l6.tsdae+mnrl"
    if rule == "simplest":  # the rule that took it before
        assert "but racing stopped it as significantly below l6.tsdae+mnrl: it is not chosen" in chosen.why
    # Even as the dev leader (an earlier checkpoint above the one that beat it), it does not lead.
    items["l6.simcse"] = replace(items["l6.simcse"], values=items["l6.simcse"].values + 2.0)
    results["l6.simcse"] = results["l6.simcse"].update(dev=float(np.mean(items["l6.simcse"].values)))
    assert results["l6.simcse"].dev > results["l6.tsdae+mnrl"].dev
    assert select(results, ["l6.start"], rule, items).chosen == "l6.tsdae+mnrl"
