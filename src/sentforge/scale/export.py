"""Export an encoder's Transformer backbone to ONNX, in fp32 or with int8 dynamic quantization.

int8 uses ONNX Runtime's dynamic quantization: Linear (MatMul) weights are stored as int8 per output
channel and activations are quantized per batch at run time, which runs on the CPU's 8-bit dot-product
instructions (AVX-512 VNNI / AVX2). Per-channel weights keep the vectors close to fp32 (see the docs for
measured fidelity). The exported directory loads with `sentforge.load` and encodes through the same
tokenise-once, length-sorted `Encoder.encode` path.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import tempfile
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sentforge.support.errors import ConfigError
from sentforge.support.identity import PROBE_TEXT
from sentforge.support.output_guard import guard_output, locked_output

if TYPE_CHECKING:  # the model stack is imported once the format and the output are checked
    from sentforge.encoder import Encoder
    from sentforge.modules.backbone import Transformer

logger = logging.getLogger(__name__)

FORMATS = ("onnx", "int8")
OPSET = 17
EXPORT = "export"  # the command family named in the output marker and the lock
_FIDELITY_TEXTS = (PROBE_TEXT, "a man is playing a guitar on the stage.", "how do I reset my password?")


def _hidden_states(model: Any) -> Any:
    """The traced function: token ids and mask in, last hidden state out."""
    from torch import nn

    class HiddenStates(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.model = model

        def forward(self, input_ids, attention_mask):
            return self.model(input_ids=input_ids, attention_mask=attention_mask)[0]

    return HiddenStates()


def _onnx_graph(backbone: Transformer, folder: Path) -> Path:
    import torch

    path = folder / "fp32.onnx"
    example = backbone.pad([[backbone.tokenizer.pad_token_id] * 8] * 2)
    axes = {0: "batch", 1: "tokens"}
    model = backbone.model.eval()
    with torch.no_grad(), warnings.catch_warnings():
        # The TorchScript exporter warns about how it lowers advanced indexing, which the check after the
        # export (the cosine to the source model) covers.
        warnings.filterwarnings("ignore", category=UserWarning, module=r"torch\.onnx")
        warnings.filterwarnings("ignore", category=torch.jit.TracerWarning)
        torch.onnx.export(_hidden_states(model), (example["input_ids"], example["attention_mask"]), str(path),
                          input_names=["input_ids", "attention_mask"], output_names=["token_embeddings"],
                          dynamic_axes={"input_ids": axes, "attention_mask": axes, "token_embeddings": axes},
                          opset_version=OPSET, dynamo=False)
    return path


def _quantize(graph: Path, folder: Path) -> Path:
    from onnxruntime.quantization import QuantType, quantize_dynamic

    path = folder / "int8.onnx"
    quantize_dynamic(str(graph), str(path), weight_type=QuantType.QInt8, per_channel=True)
    return path


def check_export(output: str | Path, format: str, overwrite: bool, source: str | None = None) -> None:
    """The checks of an export that need no model: the format and the output directory (never the
    model directory `source`, inside it or around it)."""
    if format not in FORMATS:
        raise ConfigError(f"format {format!r} (--format): choose one of {', '.join(FORMATS)}")
    guard_output(output, [("model", source)], EXPORT, overwrite)


@locked_output(EXPORT)
def export_encoder(encoder: Encoder | str | os.PathLike, output: str | Path, format: str = "int8",
                   overwrite: bool = False, source: str | None = None, seed: int | None = None) -> Path:
    """Write `encoder` with its backbone as an ONNX graph to the directory `output`; returns it.

    encoder: an Encoder, or a model spec (directory or short name) loaded with `sentforge.load` once the
    format and the output are checked; `source` (default: the spec) names the model in the export and is
    an input that the output must leave alone. `seed` seeds the random generators (`set_seed`) once those are
    checked; None leaves them as they are."""
    from sentforge.support.seed import check_seed

    if isinstance(encoder, (str, os.PathLike)):
        source = source or str(encoder)
    if seed is not None:
        check_seed(seed, "seed (--seed)")
    check_export(output, format, overwrite, source)
    import numpy as np

    from sentforge.encoder import Encoder
    from sentforge.modules.backbone import Transformer
    from sentforge.modules.onnx_backbone import OnnxModel, OnnxTransformer
    from sentforge.support.seed import set_seed

    if seed is not None:
        set_seed(seed)
    if isinstance(encoder, (str, os.PathLike)):
        from sentforge.loading import load

        encoder = load(encoder)
    backbone = encoder[0] if isinstance(encoder, Encoder) else None
    if type(backbone) is not Transformer:
        raise ConfigError(f"export needs an encoder whose backbone is a Hugging Face Transformer; "
                          f"{getattr(encoder, 'name', encoder)!r} starts with {type(backbone).__name__}")
    try:
        import onnxruntime  # noqa: F401
    except ImportError:
        raise ConfigError("export needs onnx and onnxruntime: pip install 'sentforge[onnx]'") from None
    source = source or encoder.name
    with tempfile.TemporaryDirectory(prefix="sentforge-export-") as tmp:
        graph = _onnx_graph(backbone, Path(tmp))
        if format == "int8":
            graph = _quantize(graph, Path(tmp))
        onnx_backbone = OnnxTransformer(OnnxModel(graph.read_bytes(), backbone.model.config), backbone.tokenizer,
                                        backbone.max_seq_length, backbone.do_lower_case,
                                        "int8" if format == "int8" else "fp32", source)
    card = dataclasses.replace(encoder.card, description=onnx_backbone.describe())
    exported = encoder.with_modules([onnx_backbone, *list(encoder)[1:]], name=str(output), card=card)
    reference, ours = encoder.encode(list(_FIDELITY_TEXTS)), exported.encode(list(_FIDELITY_TEXTS))
    cosine = (reference * ours).sum(1) / (np.linalg.norm(reference, axis=1) * np.linalg.norm(ours, axis=1))
    logger.info("%s export of %s: min cosine to the source model on %d probe texts = %.4f",
                format, source, len(cosine), cosine.min())
    exported.save(output, overwrite=overwrite, kind=EXPORT)
    return Path(output)
