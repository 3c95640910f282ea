"""The built-in recipes that train one encoder on one data set with one objective.

Unsupervised (sentences): tsdae, mlm, simcse, ct, bertflow. Supervised: mnrl (pairs with optional
hard negatives), sts (scored pairs). PAUSE (partially labelled pairs) is in recipes/pause.py.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from sentforge.recipes.options import option
from sentforge.recipes.recipe import BuildContext, Plan, Recipe


@dataclass
class TSDAEOptions:
    """TSDAE (Wang et al., 2021): deletion noise at 0.6 and a decoder tied to the encoder."""

    noise: str = option("delete", "Delete, swap, mask, replace or add.")
    noise_ratio: float = option(0.6, "Share of words hit.", min=0.0, max=1.0)
    tied: bool = option(True, "Share encoder and decoder weights.", flag="--tied/--untied")


def _tsdae(encoder, examples: list, options: TSDAEOptions, context: BuildContext) -> Plan:
    from sentforge.objectives.tsdae import TSDAE

    return Plan(TSDAE(encoder, noise=options.noise, noise_ratio=options.noise_ratio, tie=options.tied,
                      seed=context.seed), examples)


@dataclass
class MLMOptions:
    """Masked-language-model domain adaptation (Devlin et al., 2019): 15% of the tokens masked."""

    mlm_probability: float = option(0.15, "Share of tokens masked.", min=0.01, max=0.99)


def _masked_lm_checkpoint(model: str) -> str | None:
    """The model directory itself when it holds a masked-LM head to keep training (a checkpoint
    written by `sentforge pretrain mlm`); otherwise the head starts new."""
    config = Path(model) / "config.json"
    if not config.is_file():
        return None
    architectures = json.loads(config.read_text(encoding="utf-8")).get("architectures") or []
    return model if any(name.endswith("ForMaskedLM") for name in architectures) else None


def _mlm(encoder, examples: list, options: MLMOptions, context: BuildContext) -> Plan:
    from sentforge.objectives.mlm import MaskedLanguageModeling

    return Plan(MaskedLanguageModeling(encoder, mlm_probability=options.mlm_probability,
                                       head_from=_masked_lm_checkpoint(context.model)), examples)


@dataclass
class SimCSEOptions:
    """Unsupervised SimCSE (Gao et al., 2021): dropout views as positives, temperature 0.05."""

    temperature: float = option(0.05, "Softmax temperature.", min=1e-4)


def _contrastive(encoder, examples: list, options: SimCSEOptions, context: BuildContext) -> Plan:
    from sentforge.objectives.contrastive import ContrastiveLoss

    return Plan(ContrastiveLoss(encoder, temperature=options.temperature, similarity="cosine"), examples)


def _mnrl(encoder, examples: list, options: MNRLOptions, context: BuildContext) -> Plan:
    from sentforge.objectives.contrastive import ContrastiveLoss

    if options.mined_negatives:
        from sentforge.data.texts import read_texts
        from sentforge.support.errors import InputFileError
        from sentforge.recipes.mining import mine_hard_negatives

        if options.mining_corpus and not Path(options.mining_corpus).is_file():
            raise InputFileError(f"--mining-corpus {options.mining_corpus}: file not found")
        corpus = read_texts(options.mining_corpus) if options.mining_corpus else []
        examples = mine_hard_negatives(encoder, examples, corpus, options.mined_negatives, options.mining_margin)
    return Plan(ContrastiveLoss(encoder, temperature=options.temperature, similarity="cosine",
                                symmetric=options.symmetric), examples)


@dataclass
class MNRLOptions:
    """Multiple-negatives ranking (Henderson et al., 2017, as in sentence-transformers): cosine x 20."""

    temperature: float = option(0.05, "Softmax temperature (1/scale of the cosine).", min=1e-4)
    symmetric: bool = option(False, "Also rank the anchors for each positive (symmetric tasks: paraphrases, "
                             "duplicate questions).", flag="--symmetric/--asymmetric")
    mined_negatives: int = option(0, "Hard negatives mined per pair with the start model (0: none).", min=0)
    mining_margin: float = option(0.1, "A mined negative scores at least this far below the pair's positive "
                                  "(cosine), against unlabelled positives.", min=0.0, max=2.0)
    mining_corpus: str = option("", "A text file whose texts join the pairs' own in the mining pool.")


@dataclass
class CTOptions:
    """Contrastive Tension (Carlsson et al., 2021): K = 7 negative pairs per positive pair."""

    negatives: int = option(7, "Negative pairs per positive pair (K).", min=1)


def _ct(encoder, examples: list, options: CTOptions, context: BuildContext) -> Plan:
    from sentforge.objectives.ct import ContrastiveTension

    return Plan(ContrastiveTension(encoder, negatives=options.negatives, seed=context.seed), examples)


@dataclass
class BertFlowOptions:
    """BERT-flow (Li et al., 2020): a Glow-style flow on the frozen encoder's vectors."""

    flow_steps: int = option(9, "Flow steps.", min=1)
    flow_hidden: int = option(32, "Coupling network width.", min=1)


def _bertflow(encoder, examples: list, options: BertFlowOptions, context: BuildContext) -> Plan:
    from sentforge.objectives.bertflow import BertFlow

    objective = BertFlow(encoder, steps=options.flow_steps, hidden=options.flow_hidden)
    # The encoder is frozen: encode the corpus once and fit the flow on the vectors.
    vectors = list(encoder.encode(examples, batch_size=64, show_progress=None))
    return Plan(objective, vectors, result=objective.fitted_encoder)


@dataclass
class STSOptions:
    """Cosine regression (Reimers and Gurevych, 2019): gold scores scaled to [0, 1]."""

    score_max: float = option(5.0, "The gold score that means identical (cosine 1).")


def _sts(encoder, examples: list, options: STSOptions, context: BuildContext) -> Plan:
    from sentforge.objectives.regression import CosineRegression

    return Plan(CosineRegression(encoder, score_max=options.score_max), examples)


RECIPES = (
    Recipe(
        "tsdae", "TSDAE (Wang et al., 2021): reconstruct sentences from noisy input through the sentence vector.",
        # The paper's: AdamW, constant learning rate 3e-5, batch size 8.
        data="sentences", pooling="cls", options=TSDAEOptions, build=_tsdae,
        training={"optimizer": "adamw", "lr": 3e-5, "batch_size": 8, "schedule": "constant", "weight_decay": 0.0}),
    Recipe(
        "mlm", "Masked-language-model domain adaptation of the backbone.",
        # As the TSDAE paper's baseline: BERT's fine-tuning rate, TSDAE's batch size.
        data="sentences", pooling="mean", options=MLMOptions, build=_mlm,
        training={"optimizer": "adamw", "lr": 5e-5, "batch_size": 8, "schedule": "constant"}),
    Recipe(
        "simcse", "Unsupervised SimCSE (Gao et al., 2021): dropout views of a sentence as positives.",
        data="sentences", pooling="cls", options=SimCSEOptions, build=_contrastive,
        training={"optimizer": "adamw", "lr": 3e-5, "batch_size": 64, "schedule": "linear"}),  # BERT-base settings
    Recipe(
        "ct", "Contrastive Tension (Carlsson et al., 2021): two encoder copies agree on identical sentences.",
        data="sentences", pooling="mean", options=CTOptions, build=_ct,
        # RMSprop at 1e-5 with the paper's step-wise decay every 500 steps.
        training={"optimizer": "rmsprop", "lr": 1e-5, "batch_size": 16, "schedule": "piecewise",
                  "schedule_boundaries": (500, 1000, 1500, 2000), "schedule_factors": (1.0, 0.8, 0.6, 0.4, 0.2),
                  "weight_decay": 0.0}),
    Recipe(
        "bertflow", "BERT-flow (Li et al., 2020): a normalising flow on the frozen encoder's vectors.",
        # The paper's flow fitting.
        data="sentences", pooling="mean", options=BertFlowOptions, build=_bertflow,
        training={"optimizer": "adam", "lr": 1e-3, "batch_size": 32, "schedule": "constant", "weight_decay": 0.0}),
    Recipe(
        "mnrl", "Multiple-negatives ranking on (sentence1, sentence2[, negative]) pairs.",
        data="pairs", pooling="keep", options=MNRLOptions,
        build=_mnrl,
        # sentence-transformers' usual MNRL recipe: batch 64, lr 2e-5, 10% warm-up.
        training={"optimizer": "adamw", "lr": 2e-5, "batch_size": 64, "schedule": "linear", "warmup_ratio": 0.1}),
    Recipe(
        "sts", "Cosine regression on (sentence1, sentence2, score) pairs.",
        # Sentence-BERT's STS-B training: batch 16, lr 2e-5, 10% warm-up.
        data="scored pairs", pooling="keep", options=STSOptions, build=_sts,
        training={"optimizer": "adamw", "lr": 2e-5, "batch_size": 16, "schedule": "linear", "warmup_ratio": 0.1}),
)
