"""MetaEncoder: member encoders + a fitted meta-embedding method, usable wherever an encoder is."""

from __future__ import annotations

import dataclasses
import logging
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from safetensors.numpy import load_file, save_file

from sentforge import __version__
from sentforge.interface.encode_options import encode_options, finish_array, resolve_prompt
from sentforge.encoder import Encoder, check_texts
from sentforge.specs.encoders import SHORT_NAMES, resolve_spec
from sentforge.support.errors import ConfigError, ModelFormatError, ModelNotFoundError, SentforgeError
from sentforge.support.io import atomic_dir, save_json
from sentforge.meta.base import MetaMethod
from sentforge.meta.cache import cached_member_embeddings, member_spec
from sentforge.meta.registry import method_class, method_from_saved
from sentforge.modules.base import read_json
from sentforge.interface.st_methods import SimilarityInterface

logger = logging.getLogger(__name__)

CONFIG_FILE = "meta_encoder.json"
PARAMETERS_FILE = "meta_parameters.safetensors"
FORMAT = "sentforge-meta-encoder"


_HUB_ID = re.compile(r"^[\w.-]+/[\w.-]+$")


def reference_spec(member: Any, index: int) -> str:
    """A spec that `sentforge.load` resolves to this member from any working directory: an absolute model
    directory, `glove:` with an absolute file, a short name, or a hub id (`owner/name`)."""
    spec = member_spec(member)
    if spec is not None:
        path = Path(spec).expanduser()
        if path.is_dir():
            return str(path.resolve())
        if spec.startswith("glove:") and Path(spec[len("glove:"):]).expanduser().is_file():
            return "glove:" + str(Path(spec[len("glove:"):]).expanduser().resolve())
        if spec in SHORT_NAMES or (_HUB_ID.match(spec) and not spec.startswith((".", "~"))):
            return spec
    raise ConfigError(f"member {index} ({getattr(member, 'name', member)!r}) has no spec that sentforge.load can "
                      "resolve (a model directory, short name or hub id); save it embedded (embed_members=True, "
                      "CLI --embed-members) instead")


class MetaEncoder(SimilarityInterface):
    """An ensemble of sentence encoders combined by a meta-embedding method (Poerner et al., 2020).

    `fit(corpus)` encodes the unlabelled corpus with every member (optionally cached on disk) and fits the
    method; `encode(texts)` runs every member and the fitted method. It has `encode`, `dim` and `name`,
    so evaluation tasks and other MetaEncoders take it like any encoder; `similarity` scores its vectors
    as a SentenceTransformer does.
    """

    def __init__(self, members: Sequence[Any], method: MetaMethod | str, name: str | None = None,
                 **method_params: Any) -> None:
        if not members:
            raise ConfigError("a MetaEncoder needs at least one member encoder")
        for index, member in enumerate(members):
            if not hasattr(member, "encode") or not hasattr(member, "dim"):
                raise ConfigError(f"member {index} ({member!r}) is not an encoder (it needs encode() and dim)")
        if isinstance(method, str):
            method = method_class(method)(**method_params)
        elif method_params:
            raise ConfigError("method parameters go to the method's constructor when a method object is given")
        self.members = list(members)
        self.method = method
        self.name = name or f"meta-{method.method_name}({'+'.join(str(m.name) for m in self.members)})"

    @property
    def fitted(self) -> bool:
        return self.method.input_dims is not None

    @property
    def dim(self) -> int:
        if not self.fitted:
            raise ConfigError(f"{self.name}: fit the MetaEncoder before asking its dimension")
        return self.method.output_dim

    def member_embeddings(self, texts: Sequence[str], batch_size: int = 32, show_progress: bool | None = None,
                          cache_dir: str | Path | None = None) -> list[np.ndarray]:
        """Each member's raw embeddings of `texts`; with `cache_dir`, read from / written to an npy cache
        keyed by member spec and corpus hash."""
        texts = check_texts(texts)
        return [cached_member_embeddings(member, texts, cache_dir, batch_size, show_progress)
                for member in self.members]

    def fit(self, corpus: Sequence[str], batch_size: int = 32, show_progress: bool | None = None,
            cache_dir: str | Path | None = None) -> MetaEncoder:
        """Fit the method on the members' embeddings of an unlabelled corpus."""
        embeddings = self.member_embeddings(corpus, batch_size, show_progress, cache_dir)
        self.method.fit(embeddings)
        logger.info("%s: fitted on %d sentences, dimension %d", self.name, len(embeddings[0]), self.dim)
        return self

    def encode(self, texts: Sequence[str] | str, batch_size: int = 32, normalize: bool = False,
               show_progress: bool | None = None, **options: Any) -> np.ndarray:
        """Meta-embeddings (float32, (n, dim)): every member encodes, then the fitted method combines.
        Takes the same keywords as `Encoder.encode` (a `prompt` goes to every member)."""
        opts = encode_options(options, batch_size=batch_size, normalize=normalize, show_progress=show_progress)
        if isinstance(texts, str):
            return self.encode([texts], **dataclasses.asdict(opts))[0]
        if not self.fitted:
            raise ConfigError(f"{self.name}: fit the MetaEncoder (or load a fitted one) before encoding")
        texts = check_texts(texts)
        prompt = resolve_prompt(opts, {}, None)
        texts = [prompt + text for text in texts] if prompt else texts
        embeddings = [member.encode(texts, batch_size=opts.batch_size, show_progress=opts.show_progress)
                      for member in self.members]
        return finish_array(self.method.transform(embeddings), texts, opts, self.name)

    # ---------------------------------------------------------------- persistence
    def save(self, path: str | Path, overwrite: bool = False, embed_members: bool = False,
             kind: str | None = None) -> None:
        """Write the config (JSON), the fitted parameters (safetensors) and the members: by reference
        (their spec; the default) or embedded as saved Encoder directories under `members/`. `kind`: the
        command family that writes it (its output marker; see sentforge.support.output_guard)."""
        if not self.fitted:
            raise ConfigError(f"{self.name}: fit the MetaEncoder before saving it")
        entries = []
        for index, member in enumerate(self.members):
            if embed_members and not isinstance(member, Encoder):
                raise ConfigError(f"member {index} ({member.name!r}) is a {type(member).__name__}, which cannot be "
                                  "embedded; save this MetaEncoder with members by reference")
            entry = {"name": str(member.name), "dim": int(member.dim)}
            entries.append(entry | ({"path": f"members/{index}"} if embed_members
                                    else {"spec": reference_spec(member, index)}))
        with atomic_dir(path, overwrite, kind) as tmp:
            if embed_members:
                for index, member in enumerate(self.members):
                    member.save(tmp / "members" / str(index))
            save_json(tmp / CONFIG_FILE, {"format": FORMAT, "sentforge_version": __version__, "name": self.name,
                                          "dim": self.dim, "similarity_fn_name": self.similarity_fn_name,
                                          "method": self.method.config(), "members": entries})
            save_file({k: np.ascontiguousarray(v) for k, v in self.method.parameters().items()},
                      str(tmp / PARAMETERS_FILE))

    @classmethod
    def load(cls, path: str | Path, device: str | None = None) -> MetaEncoder:
        """Read a directory written by `save`; members saved by reference are resolved as
        `sentforge.load` resolves an encoder spec, and a member that cannot be found raises ModelNotFoundError
        naming it."""
        path = Path(path)
        if not (path / CONFIG_FILE).is_file():
            raise ModelNotFoundError(f"{path} is not a saved MetaEncoder (no {CONFIG_FILE})")
        config = read_json(path / CONFIG_FILE)
        if not isinstance(config, dict) or config.get("format") != FORMAT:
            raise ModelFormatError(f"{path / CONFIG_FILE}: not a {FORMAT} config")
        try:
            parameters = load_file(str(path / PARAMETERS_FILE))
        except (OSError, ValueError) as err:
            raise ModelFormatError(f"{path / PARAMETERS_FILE}: cannot read the fitted parameters ({err})") from None
        members = [_load_member(path, index, entry, device) for index, entry in enumerate(config.get("members", []))]
        method = method_from_saved(config["method"], parameters)
        dims = [member.dim for member in members]
        if dims != method.input_dims:
            raise ModelFormatError(f"{path}: members give dimensions {dims}, "
                                   f"the method was fitted on {method.input_dims}")
        meta = cls(members, method, name=config.get("name"))
        try:
            meta.similarity_fn_name = config.get("similarity_fn_name")
        except ConfigError as err:
            raise ModelFormatError(f"{path / CONFIG_FILE}: {err}") from None
        return meta

    def __repr__(self) -> str:
        return f"MetaEncoder(name={self.name!r}, members={len(self.members)}, method={self.method.method_name!r})"


def _load_member(root: Path, index: int, entry: dict[str, Any], device: str | None) -> Any:
    name = entry.get("name", f"member {index}")
    if "path" in entry:
        member_dir = root / entry["path"]
        if not (member_dir / "modules.json").is_file():
            raise ModelNotFoundError(f"{root}: embedded member {index} ({name!r}) is missing: {member_dir} "
                                     "holds no saved encoder")
        member = Encoder.load(member_dir, name=name)
    else:
        spec = entry.get("spec")
        if not spec:
            raise ModelFormatError(f"{root / CONFIG_FILE}: member {index} has neither a spec nor a path")
        try:
            member = resolve_spec(spec)
        except SentforgeError as err:
            raise ModelNotFoundError(f"{root}: member {index} ({spec!r}) cannot be loaded: {err}. Make it available "
                                     "again, or re-save the MetaEncoder with embedded members") from None
    if device is not None and isinstance(member, Encoder):
        member.to(device)
    if member.dim != entry.get("dim", member.dim):
        raise ModelFormatError(f"{root}: member {index} ({name!r}) now has dimension {member.dim}, "
                               f"it had {entry['dim']} when the MetaEncoder was fitted")
    return member
