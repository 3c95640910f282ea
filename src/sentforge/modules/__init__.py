"""Pipeline modules and the registry that maps a modules.json `type` to a sentforge class."""

from __future__ import annotations

from sentforge.support.errors import ModelFormatError
from sentforge.modules.backbone import HFBackbone, T5EncoderDecoder, Transformer
from sentforge.modules.base import InputModule, Module
from sentforge.modules.normalize import Normalize
from sentforge.modules.pooling import Pooling
from sentforge.modules.projection import Projection
from sentforge.modules.static import WordVectors

_REGISTRY: dict[str, type[Module]] = {}


def register_module(cls: type[Module], *aliases: str) -> type[Module]:
    """Make `cls` loadable from modules.json under its `type_name` and any aliases."""
    for name in (cls.type_name, *aliases):
        _REGISTRY[name] = cls
    return cls


register_module(Transformer, "sentence_transformers.base.modules.transformer.Transformer")
register_module(Pooling, "sentence_transformers.sentence_transformer.modules.pooling.Pooling")
register_module(Projection, "sentence_transformers.base.modules.dense.Dense")
register_module(Normalize, "sentence_transformers.base.modules.normalize.Normalize")
register_module(T5EncoderDecoder)
register_module(WordVectors, "sentence_transformers.sentence_transformer.modules.static_embedding.StaticEmbedding",
                "sentforge.modules.WordVectors")
from sentforge.modules.flow import Flow  # noqa: E402
register_module(Flow)
from sentforge.modules.onnx_backbone import OnnxTransformer  # noqa: E402
register_module(OnnxTransformer)


def module_class(type_name: str) -> type[Module]:
    try:
        return _REGISTRY[type_name]
    except KeyError:
        known = ", ".join(sorted({cls.__name__ for cls in _REGISTRY.values()}))
        raise ModelFormatError(f"module type {type_name!r} is not supported by sentforge "
                               f"(supported: {known})") from None


__all__ = [
    "HFBackbone", "InputModule", "Module", "Normalize", "Pooling", "Projection", "T5EncoderDecoder",
    "Transformer", "WordVectors", "module_class", "register_module",
]
