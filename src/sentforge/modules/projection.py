"""A linear projection of the sentence vector (sentence-transformers' Dense format)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from torch import nn

from sentforge.support.errors import ModelFormatError
from sentforge.modules.base import WEIGHTS_FILE, Features, Module, load_weights, read_json

# Only plain torch.nn activations are accepted from a config: nothing is imported by name.
ACTIVATIONS: dict[str, type[nn.Module]] = {
    "identity": nn.Identity, "tanh": nn.Tanh, "relu": nn.ReLU, "gelu": nn.GELU, "sigmoid": nn.Sigmoid,
}
_TORCH_NAMES = {cls.__module__ + "." + cls.__name__: name for name, cls in ACTIVATIONS.items()}


class Projection(Module):
    """`sentence_embedding <- activation(W x + b)`; Sentence-T5 projects to a fixed size before L2 norm."""

    type_name: ClassVar[str] = "sentence_transformers.models.Dense"

    def __init__(self, in_features: int, out_features: int, bias: bool = True, activation: str = "identity") -> None:
        super().__init__()
        if activation not in ACTIVATIONS:
            raise ModelFormatError(f"unknown activation {activation!r}; choose from {', '.join(ACTIVATIONS)}")
        self.activation_name = activation
        self.linear = nn.Linear(in_features, out_features, bias=bias)
        self.activation = ACTIVATIONS[activation]()

    @property
    def input_dim(self) -> int:
        return self.linear.in_features

    @property
    def output_dim(self) -> int:
        return self.linear.out_features

    def forward(self, features: Features) -> Features:
        features["sentence_embedding"] = self.activation(self.linear(features["sentence_embedding"]))
        return features

    def config(self) -> dict[str, Any]:
        return {
            "in_features": self.linear.in_features,
            "out_features": self.linear.out_features,
            "bias": self.linear.bias is not None,
            "activation_function": type(self.activation).__module__ + "." + type(self.activation).__name__,
        }

    @classmethod
    def load(cls, path: Path) -> Projection:
        config = read_json(path / cls.config_file)
        torch_name = config.get("activation_function", "torch.nn.modules.activation.Tanh")
        if torch_name not in _TORCH_NAMES:
            raise ModelFormatError(f"{path}: unsupported activation {torch_name!r}")
        try:
            module = cls(config["in_features"], config["out_features"], config.get("bias", True),
                         _TORCH_NAMES[torch_name])
        except (KeyError, TypeError) as err:
            raise ModelFormatError(f"{path / cls.config_file}: bad or missing entry {err}") from None
        load_weights(module, path / WEIGHTS_FILE)
        return module
