"""The PAUSE recipe (Cao et al., 2021): an encoder trained on partially labelled sentence pairs.

The batches mirror the composition of the classes and the unlabelled pairs (data/samplers.py); the
objective is objectives/pause.py.
"""

from __future__ import annotations

from dataclasses import dataclass

from sentforge.support.errors import ConfigError
from sentforge.recipes.options import option
from sentforge.recipes.recipe import BuildContext, Plan, Recipe

# The paper's settings (Cao et al., 2021; EQTPartners/pause train_nli.py): Adam, lr 7.5e-5, 10% linear
# warm-up, then polynomial (power 1) decay to 5e-6 whatever the peak rate; mini-batches of 1024 pairs.
END_LR = 5e-6
TRAINING = {"optimizer": "adam", "lr": 7.5e-5, "batch_size": 1024, "schedule": "polynomial", "warmup_ratio": 0.1,
            "schedule_power": 1.0, "weight_decay": 0.0}


def parse_priors(text: str | None) -> dict[str, float] | None:
    """Class priors from "class=prior,class=prior,..."."""
    if not text:
        return None
    pairs = [part.split("=", 1) for part in text.split(",")]
    if any(len(p) != 2 for p in pairs):
        raise ConfigError(f"--priors: expected class=prior,..., got {text!r}")
    try:
        return {name.strip(): float(value) for name, value in pairs}
    except ValueError:
        raise ConfigError(f"--priors: priors must be numbers, got {text!r}") from None


@dataclass
class PAUSEOptions:
    """PAUSE (Cao et al., 2021): PU weight annealed as (t/T)^3, class priors 1/K."""

    label_fraction: float = option(1.0, "Share of each class's labels kept (seeded); the rest are unlabelled.",
                                   min=0.0, max=1.0)
    priors: dict[str, float] | None = option(None, "Class priors, e.g. entailment=0.4,neutral=0.3,contradiction=0.3 "
                                                   "(default 1/K each).", parse=parse_priors)
    supervised_only: bool = option(False, "Baseline: the same head trained with cross-entropy on the labelled "
                                          "pairs alone (no PU term, unlabelled dropped).")
    anneal_power: float = option(3.0, "p of the PU weight (t/T)^p (paper: 3).", min=0.0)


def _build(encoder, examples: list, options: PAUSEOptions, context: BuildContext) -> Plan:
    import logging

    from sentforge.data.nli import label_fraction
    from sentforge.data.samplers import ProportionalSampler
    from sentforge.objectives.pause import PAUSE
    from sentforge.support import distributed

    if options.anneal_power <= 0:
        raise ConfigError(f"--anneal-power must be positive, got {options.anneal_power}")
    lr = context.training["lr"]
    if not lr > 0:
        raise ConfigError(f"--lr must be positive, got {lr}")
    examples = label_fraction(examples, options.label_fraction, context.seed)
    classes = sorted({label for _, _, label in examples if label is not None})
    if not classes:
        raise ConfigError("no labelled pairs: PAUSE needs at least one labelled pair (raise --label-fraction)")
    labelled = sum(label is not None for _, _, label in examples)
    if options.supervised_only:
        examples = [pair for pair in examples if pair[2] is not None]
    logging.getLogger(__name__).info("pause: %d pairs, %d labelled, classes %s", len(examples), labelled,
                                     ", ".join(classes))
    sampler = ProportionalSampler([label for _, _, label in examples], context.seed)
    global_batch = context.training["batch_size"] * distributed.world_size()
    steps = context.training.get("steps") or (context.training.get("epochs") or 1) * len(sampler.batches(global_batch))
    objective = PAUSE(encoder, classes, total_steps=steps, priors=_priors(options.priors, classes),
                      anneal_power=options.anneal_power, use_pu=not options.supervised_only)
    return Plan(objective, examples, batch_sampler=sampler, training={"schedule_end_factor": END_LR / lr},
                summary={"batch_size": context.training["batch_size"], "labelled": labelled, "classes": classes,
                         "priors": objective.priors,
                         "label_fraction": options.label_fraction, "supervised_only": options.supervised_only})


def _priors(given: dict[str, float] | None, classes: list[str]) -> list[float] | None:
    if given is None:
        return None
    if set(given) != set(classes):
        raise ConfigError(f"--priors names {sorted(given)}; the labelled classes are {classes}")
    return [float(given[name]) for name in classes]


RECIPES = (
    Recipe("pause", "PAUSE (Cao et al., 2021): partially labelled pairs, positive-unlabelled learning.",
           data="labelled pairs", pooling="mean", training=TRAINING, options=PAUSEOptions, build=_build),
)
