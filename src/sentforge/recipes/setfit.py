"""The `setfit` recipe: an encoder trained on class-labelled texts, then a logistic-regression head fitted on
its vectors (SetFit, Tunstall et al., 2022). The run directory's model is the classifier: the encoder's
sentence-transformers directory with the head in safetensors (classification/).

Two losses: `cosine`, SetFit's own (cosine-similarity regression on pairs of one class, target 1, and of two
classes, target 0; data/class_pairs.py), and `supcon`, supervised contrastive loss on batches of class groups
(objectives/supervised_contrastive.py, data/class_batches.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from sentforge.recipes.options import option
from sentforge.recipes.recipe import BuildContext, Plan, Recipe

LOSSES = ("cosine", "supcon")


@dataclass
class SetFitOptions:
    """SetFit (Tunstall et al., 2022): 20 rounds of pairs, a logistic-regression head."""

    loss: str = option("cosine", "cosine (SetFit's pairs of one class / two classes) or supcon (supervised "
                       "contrastive on batches of class groups).")
    iterations: int = option(20, "Rounds over the texts: each draws a same-class and a different-class partner "
                             "per text (cosine), or passes over the texts in class groups (supcon).", min=1)
    temperature: float = option(0.05, "supcon: softmax temperature of the cosine.", min=1e-4)
    head_c: float = option(1.0, "Inverse L2 strength of the logistic-regression head.", min=1e-6)


def training_rows(texts: int, options: SetFitOptions | None = None) -> int:
    """The rows one epoch trains on for `texts` class-labelled texts: two pairs per text and round (cosine), each
    text once per round (supcon)."""
    options = options or SetFitOptions()
    return options.iterations * texts * (2 if options.loss == "cosine" else 1)


def _build(encoder, examples: list, options: SetFitOptions, context: BuildContext) -> Plan:
    import logging

    from sentforge.classification.classifier import SentenceClassifier
    from sentforge.classification.head import LogisticHead
    from sentforge.support.errors import ConfigError

    if options.loss not in LOSSES:
        raise ConfigError(f"--loss must be one of {', '.join(LOSSES)}, got {options.loss!r}")
    classes = len({label for _, label in examples})
    logging.getLogger(__name__).info("setfit: %d texts of %d classes, %s loss", len(examples), classes, options.loss)

    def classifier() -> SentenceClassifier:
        vectors = encoder.encode([text for text, _ in examples], batch_size=64, show_progress=None)
        head = LogisticHead.fit(vectors, [label for _, label in examples], seed=context.seed, c=options.head_c)
        return SentenceClassifier(encoder, head)

    summary = {"classes": classes, "texts": len(examples), "head": "logistic-regression"}
    if options.loss == "cosine":
        from sentforge.data.class_pairs import class_pairs
        from sentforge.objectives.regression import CosineRegression

        pairs = class_pairs(examples, options.iterations, context.seed)
        return Plan(CosineRegression(encoder, score_max=1.0), pairs, result=classifier, summary=summary)
    from sentforge.data.class_batches import ClassGroupSampler
    from sentforge.objectives.supervised_contrastive import SupervisedContrastive

    sampler = ClassGroupSampler([label for _, label in examples], options.iterations, seed=context.seed)
    return Plan(SupervisedContrastive(encoder, options.temperature), examples, batch_sampler=sampler,
                result=classifier, summary=summary)


RECIPES = (
    Recipe("setfit", "SetFit (Tunstall et al., 2022): contrastive training on class-labelled texts, then a "
           "logistic-regression head; the model predicts classes.",
           # setfit's defaults for the encoder: batch 16, lr 2e-5, one epoch, 10% linear warm-up.
           data="classes", pooling="keep", options=SetFitOptions, build=_build,
           training={"optimizer": "adamw", "lr": 2e-5, "batch_size": 16, "schedule": "linear", "warmup_ratio": 0.1}),
)
