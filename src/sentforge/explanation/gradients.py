"""Integrated gradients (Sundararajan et al., 2017) of the cosine similarity of two texts with respect to
their input token embeddings, computed by captum.

The path runs from a baseline, in which every word piece of both texts is the padding token's embedding
(special tokens keep theirs), to the real input. A token's attribution is summed over the embedding
dimensions; by completeness the attributions of all tokens of both texts add up to
similarity(input) - similarity(baseline), up to captum's integration error (`completeness_gap`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sentforge.errors import ConfigError
from sentforge.explanation.words import TokenizedText


@dataclass(frozen=True)
class GradientScores:
    similarity: float           # cosine of the two texts, through the embeddings path
    baseline_similarity: float  # cosine of the two baselines
    a: tuple[float, ...]        # per input token of text a (special tokens included)
    b: tuple[float, ...]
    completeness_gap: float     # sum of all attributions - (similarity - baseline_similarity)
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


def integrated_gradients(model: Any, a: TokenizedText, b: TokenizedText, steps: int = 50,
                         internal_batch_size: int | None = None) -> GradientScores:
    """Integrated gradients of cos(a, b) over the input token embeddings of both texts (captum, Gauss-Legendre)."""
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

    def similarity(embeds_a: torch.Tensor, embeds_b: torch.Tensor) -> torch.Tensor:
        return F.cosine_similarity(sentence(ids_a, embeds_a), sentence(ids_b, embeds_b), dim=1)

    was_training = model.training
    model.eval()
    try:
        with torch.no_grad():
            full = float(similarity(input_a, input_b)[0])
            base = float(similarity(base_a, base_b)[0])
        (attr_a, attr_b), gap = IntegratedGradients(similarity).attribute(
            (input_a, input_b), baselines=(base_a, base_b), n_steps=steps, method="gausslegendre",
            internal_batch_size=internal_batch_size or steps, return_convergence_delta=True)
    finally:
        model.train(was_training)
    per_token_a = attr_a[0].sum(dim=-1).double().cpu().tolist()
    per_token_b = attr_b[0].sum(dim=-1).double().cpu().tolist()
    return GradientScores(full, base, tuple(per_token_a), tuple(per_token_b), float(gap[0]), steps)
