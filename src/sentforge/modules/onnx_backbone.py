"""A backbone that runs an ONNX graph with ONNX Runtime: the inference-only form of a Transformer that
`sentforge export` writes (fp32, or int8 with dynamically quantized weights).

It keeps the Hugging Face tokenizer and config beside `model.onnx`, so tokenisation, length-sorted
batching and the pooling modules after it are exactly those of the Transformer it came from.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import torch
from torch import nn
from transformers import AutoConfig, AutoTokenizer, PretrainedConfig

from sentforge import __version__
from sentforge.support.errors import ConfigError, ModelFormatError
from sentforge.modules.backbone import ST_CONFIG_FILE, Transformer, _quiet_transformers
from sentforge.modules.base import read_json, write_json

ONNX_FILE = "model.onnx"
PRECISIONS = {"fp32": "float32 weights and activations",
              "int8": "int8 weights (per output channel), activations quantized to 8 bits at run time"}


def ort_session(model: bytes | str | Path) -> Any:
    try:
        import onnxruntime
    except ImportError:
        raise ConfigError("ONNX models need onnxruntime: pip install 'sentforge[onnx]'") from None
    options = onnxruntime.SessionOptions()
    # Follow torch's thread setting so OMP_NUM_THREADS / torch.set_num_threads govern both paths alike.
    options.intra_op_num_threads = torch.get_num_threads()
    options.inter_op_num_threads = 1
    source = str(model) if isinstance(model, Path) else model
    try:
        return onnxruntime.InferenceSession(source, options, providers=["CPUExecutionProvider"])
    except Exception as err:  # onnxruntime raises its own untyped errors for unreadable graphs
        raise ModelFormatError(f"cannot load ONNX graph {model if isinstance(model, (str, Path)) else ''}: "
                               f"{str(err).splitlines()[0]}") from None


class OnnxModel(nn.Module):
    """The Hugging Face model call (input_ids, attention_mask) -> (last hidden state,) through ONNX Runtime."""

    def __init__(self, graph: bytes, config: PretrainedConfig) -> None:
        super().__init__()
        self.graph = graph
        self.config = config
        self.session = ort_session(graph)

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> tuple[torch.Tensor]:
        hidden = self.session.run(None, {"input_ids": input_ids.cpu().numpy(),
                                         "attention_mask": attention_mask.cpu().numpy()})[0]
        return (torch.from_numpy(np.ascontiguousarray(hidden)),)


class OnnxTransformer(Transformer):
    """Transformer whose model is an ONNX graph (inference only: it has no trainable parameters)."""

    type_name: ClassVar[str] = "sentforge.modules.OnnxTransformer"

    def __init__(self, model: OnnxModel, tokenizer: Any, max_seq_length: int | None = None,
                 do_lower_case: bool = False, precision: str = "fp32", source: str = "") -> None:
        if precision not in PRECISIONS:
            raise ModelFormatError(f"ONNX precision {precision!r} is not one of {', '.join(PRECISIONS)}")
        super().__init__(model, tokenizer, max_seq_length, do_lower_case)
        self.precision = precision
        self.source = source

    def config(self) -> dict[str, Any]:
        return super().config() | {"onnx": {"file": ONNX_FILE, "precision": self.precision, "source": self.source}}

    def save(self, path: Path) -> None:
        path.mkdir(parents=True, exist_ok=True)
        (path / ONNX_FILE).write_bytes(self.model.graph)
        self.model.config.save_pretrained(path)
        self.tokenizer.save_pretrained(path)
        write_json(path / self.config_file, self.config())

    def describe(self) -> str:
        """What this backbone is, for the model card of the exported directory."""
        return (f"ONNX {self.precision} export of {self.source or 'a sentence encoder'}, written by `sentforge "
                f"export` (sentforge {__version__}). The backbone is `{ONNX_FILE}`, run with ONNX Runtime on CPU: "
                f"{PRECISIONS[self.precision]}. Tokenizer, pooling and any later modules are those of the source "
                "model. This directory is for inference only (it cannot be trained); loading it needs "
                "`pip install 'sentforge[onnx]'`.")

    @classmethod
    def load(cls, path: Path) -> OnnxTransformer:
        options = read_json(path / ST_CONFIG_FILE)
        onnx = options.get("onnx") or {}
        graph_file = path / onnx.get("file", ONNX_FILE)
        if not graph_file.is_file():
            raise ModelFormatError(f"missing ONNX graph {graph_file}")
        with _quiet_transformers():
            config = AutoConfig.from_pretrained(str(path))
            tokenizer = AutoTokenizer.from_pretrained(str(path))
        return cls(OnnxModel(graph_file.read_bytes(), config), tokenizer, options.get("max_seq_length"),
                   bool(options.get("do_lower_case", False)), onnx.get("precision", "fp32"), onnx.get("source", ""))

    @classmethod
    def from_pretrained(cls, name_or_path: str | Path, max_seq_length: int | None = None,
                        do_lower_case: bool = False, **model_kwargs: Any) -> OnnxTransformer:
        return cls.load(Path(name_or_path))
