"""The distillation recipes. `distil`: one encoder learns to reproduce a teacher's vectors (an encoder, or a
fitted meta-embedding) on unlabelled texts, by MSE (Reimers & Gurevych, 2020). When the dimensions differ, a
Dense layer to the teacher's dimension is added to the student, so that the result stays one
sentence-transformers model. `marginmse`: a bi-encoder learns a cross-encoder teacher's score margins
(Hofstätter et al., 2020; GPL), from (query, positive, negative, margin) rows that recipes/margins.py builds."""

from __future__ import annotations

from dataclasses import dataclass

from sentforge.support.errors import ConfigError
from sentforge.recipes.options import option
from sentforge.recipes.recipe import BuildContext, Plan, Recipe

TEACHER_BATCH = 64


@dataclass
class DistilOptions:
    """MSE distillation (Reimers & Gurevych, 2020) of a teacher's vectors into the model."""

    teacher: str = option("", "The teacher: a model spec or a meta-embedding directory (sentforge meta fit).")


def _distil(encoder, examples: list, options: DistilOptions, context: BuildContext) -> Plan:
    from sentforge.loading import load
    from sentforge.modules.projection import Projection
    from sentforge.objectives.distillation import MSEDistillation, TeacherVectors

    if not options.teacher:
        raise ConfigError("distil needs a teacher (--teacher): a model spec or a meta-embedding directory")
    targets = TeacherVectors(load(options.teacher, device=str(encoder.device)), TEACHER_BATCH)
    if encoder.dim != targets.dim:
        encoder.append(Projection(encoder.dim, targets.dim).to(encoder.device))
    return Plan(MSEDistillation(encoder, targets), examples,
                summary={"teacher": options.teacher, "teacher_dim": targets.dim})


@dataclass
class MarginMSEOptions:
    """MarginMSE (Hofstätter et al., 2020): the teacher's margins come with the examples; no option of its own."""


def _marginmse(encoder, examples: list, options: MarginMSEOptions, context: BuildContext) -> Plan:
    from sentforge.objectives.margin_mse import MarginMSE

    return Plan(MarginMSE(encoder), examples)


RECIPES = (
    Recipe(
        "distil", "MSE distillation of a teacher's vectors (an encoder or a meta-embedding) into the model.",
        # sentence-transformers' multilingual distillation: batch 64, lr 2e-5, 10% warm-up.
        data="sentences", pooling="keep", options=DistilOptions, build=_distil,
        training={"optimizer": "adamw", "lr": 2e-5, "batch_size": 64, "schedule": "linear", "warmup_ratio": 0.1}),
    Recipe(
        "marginmse", "MarginMSE (Hofstätter et al., 2020; GPL): learn a cross-encoder teacher's score margins "
                     "from (query, positive, negative, margin) rows.",
        # GPL's training: AdamW, lr 2e-5, batch 32, linear decay; warm-up as a share of the run (GPL's 1,000
        # steps would be all of a short run).
        data="margin triples", pooling="keep", options=MarginMSEOptions, build=_marginmse,
        training={"optimizer": "adamw", "lr": 2e-5, "batch_size": 32, "schedule": "linear", "warmup_ratio": 0.1}),
)
