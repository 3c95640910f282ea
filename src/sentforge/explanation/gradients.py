"""Integrated gradients (Sundararajan et al., 2017) of the cosine similarity of two texts with respect to
their input token embeddings, computed by captum.

A text's baseline has the padding token's embedding at every word piece (special tokens keep theirs). Two
paths (`baseline`):
- "each" (default): each text's path runs from its baseline to the real text while the other text stays as
  it is, as in leave-one-word-out deletion. By completeness the attributions of text a add up to
  cos(a, b) - cos(baseline a, b), and those of b to cos(a, b) - cos(a, baseline b).
- "pair": one path moves both texts from their baselines at once; all attributions of both texts add up to
  cos(a, b) - cos(baseline a, baseline b). Two all-padding texts are nearly identical, so that baseline
  similarity is close to 1 and most attributions are negative.
A token's attribution is summed over the embedding dimensions; captum's integration error is the
`completeness_gap`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sentforge.support.errors import ConfigError
from sentforge.explanation.words import TokenizedText


BASELINES = ("each", "pair")


@dataclass(frozen=True)
class GradientScores:
    similarity: float                  # cosine of the two texts, through the embeddings path
    baseline: str                      # "each" or "pair"
    baseline_similarity: tuple[float, float]  # each: (cos(base a, b), cos(a, base b)); pair: cos(base a, base b) twice
    a: tuple[float, ...]               # per input token of text a (special tokens included)
    b: tuple[float, ...]
    completeness_gap: tuple[float, ...]  # attributions - similarity gain: each: per text; pair: one for both
    steps: int


def gradient_backbone(model: Any) -> Any:
    """The Hugging Face backbone whose input embeddings the gradients flow into, or a ConfigError saying why
    `model` has none (word vectors, ONNX graphs, models without a sentforge Encoder)."""
    from sentforge.encoder import Encoder
    from sentforge.modules.backbone import HFBackbone
    from sentforge.modules.onnx_backbone import OnnxTransformer
    from sentforge.modules.static import WordVectors

    hint = "; leave-one-word-out deletion works for it (methods=('deletion',), or --method deletion)"
    name = getattr(model, "name", type(model).__name__)
    if not isinstance(model, Encoder):
        raise ConfigError(f"integrated gradients need a transformer Encoder with token embeddings; "
                          f"{name} is a {type(model).__name__}{hint}")
    module = model.input_module
    if isinstance(module, OnnxTransformer):
        raise ConfigError(f"integrated gradients are not available for the ONNX model {name}: an ONNX Runtime "
                          f"graph has no gradients (explain the model it was exported from){hint}")
    if isinstance(module, WordVectors):
        raise ConfigError(f"integrated gradients are not available for the word-vector model {name}: its sentence "
                          f"vector is an average of fixed word vectors, with no token embeddings to attribute to{hint}")
    if not isinstance(module, HFBackbone):
        raise ConfigError(f"integrated gradients need a transformer backbone; {name} starts with "
                          f"{type(module).__name__}{hint}")
    return module


def integrated_gradients(model: Any, a: TokenizedText, b: TokenizedText, steps: int = 50, baseline: str = "each",
                         internal_batch_size: int | None = None) -> GradientScores:
    """Integrated gradients of cos(a, b) over the input token embeddings of the texts (captum, Gauss-Legendre)."""
    import torch
    import torch.nn.functional as F

    try:
        from captum.attr import IntegratedGradients
    except ImportError:
        raise ConfigError("integrated gradients need captum: pip install 'sentforge[explain]' "
                          "(or explain by deletion only)") from None
    backbone = gradient_backbone(model)
    if steps < 1:
        raise ConfigError(f"steps must be at least 1, got {steps}")
    if baseline not in BASELINES:
        raise ConfigError(f"baseline {baseline!r}: choose {' or '.join(BASELINES)}")
    device = model.device
    table = backbone.model.get_input_embeddings()
    pad_id = backbone.tokenizer.pad_token_id
    dim = model.dim

    def prepared(text: TokenizedText) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        ids = torch.tensor([text.ids], dtype=torch.long, device=device)
        base_ids = torch.full_like(ids, pad_id)
        special = list(text.special)
        base_ids[0, special] = ids[0, special]
        with torch.no_grad():
            return ids, table(ids).detach(), table(base_ids).detach()

    ids_a, input_a, base_a = prepared(a)
    ids_b, input_b, base_b = prepared(b)

    def sentence(ids: torch.Tensor, embeds: torch.Tensor) -> torch.Tensor:
        n = embeds.shape[0]
        features = {"input_ids": ids.expand(n, -1), "attention_mask": torch.ones_like(ids).expand(n, -1),
                    "inputs_embeds": embeds}
        return model(features)["sentence_embedding"][:, :dim]

    def cos(u: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        return F.cosine_similarity(u, v.expand_as(u), dim=1)

    options = {"n_steps": steps, "method": "gausslegendre", "internal_batch_size": internal_batch_size or steps,
               "return_convergence_delta": True}
    was_training = model.training
    model.eval()
    try:
        with torch.no_grad():
            vec_a, vec_b = sentence(ids_a, input_a), sentence(ids_b, input_b)
            vec_base_a, vec_base_b = sentence(ids_a, base_a), sentence(ids_b, base_b)
            full = float(cos(vec_a, vec_b)[0])
        if baseline == "pair":
            base = float(cos(vec_base_a, vec_base_b)[0])
            (attr_a, attr_b), gap = IntegratedGradients(lambda ea, eb: cos(sentence(ids_a, ea), sentence(ids_b, eb))) \
                .attribute((input_a, input_b), baselines=(base_a, base_b), **options)
            base_similarity, gaps = (base, base), (float(gap[0]),)
        else:
            attr_a, gap_a = IntegratedGradients(lambda e: cos(sentence(ids_a, e), vec_b)) \
                .attribute(input_a, baselines=base_a, **options)
            attr_b, gap_b = IntegratedGradients(lambda e: cos(sentence(ids_b, e), vec_a)) \
                .attribute(input_b, baselines=base_b, **options)
            base_similarity = (float(cos(vec_base_a, vec_b)[0]), float(cos(vec_a, vec_base_b)[0]))
            gaps = (float(gap_a[0]), float(gap_b[0]))
    finally:
        model.train(was_training)
    per_token_a = attr_a[0].sum(dim=-1).double().cpu().tolist()
    per_token_b = attr_b[0].sum(dim=-1).double().cpu().tolist()
    return GradientScores(full, baseline, base_similarity, tuple(per_token_a), tuple(per_token_b), gaps, steps)
