"""Run MTEB on sentforge encoders (pip install 'sentforge[mteb]').

    import mteb
    from sentforge.integrations.mteb import MTEBEncoder, with_local_data

    model = MTEBEncoder(sentforge.load("out/my-model"))
    task = with_local_data(mteb.get_task("STSBenchmark"), {"test": {"sentence1": [...], "sentence2": [...],
                                                                    "score": [...]}})
    results = mteb.evaluate(model, task, cache=None)

`mteb.evaluate` given a bare sentforge Encoder cannot read its metadata (it records an empty model);
`MTEBEncoder` gives it the name, a content revision, the dimension, the maximum length and the number
of parameters. MTEB downloads its datasets from the Hugging Face hub; `with_local_data` hands a task
columns read from local files instead, in the layout that the task's own dataset has.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from sentforge.encoder import Encoder
from sentforge.support.errors import ConfigError
from sentforge.interface.model_card import display_name

try:
    from datasets import Dataset, DatasetDict
    from mteb.models import ModelMeta
    from mteb.models.abs_encoder import AbsEncoder
    from mteb.models.model_meta import ScoringFunction
except ImportError as err:  # pragma: no cover - depends on the installed extras
    raise ImportError("sentforge.integrations.mteb needs MTEB: pip install 'sentforge[mteb]'") from err

class MTEBEncoder(AbsEncoder):
    """A sentforge Encoder, MetaEncoder or CallableEncoder as an MTEB encoder.

    The encoder's prompts (if any) are offered to MTEB's prompt selection, which picks one by task name,
    task type or query/document role, as it does for sentence-transformers models.
    """

    def __init__(self, encoder: Any, name: str | None = None, revision: str | None = None,
                 languages: Sequence[str] | None = None) -> None:
        self.model = encoder
        self.model_prompts = dict(getattr(encoder, "prompts", {}) or {}) or None
        self.mteb_model_meta = model_meta(encoder, name, revision, languages)

    def encode(self, inputs: Any, *, task_metadata: Any, hf_split: str, hf_subset: str,
               prompt_type: Any = None, **kwargs: Any) -> np.ndarray:
        texts = [text for batch in inputs for text in batch["text"]]
        prompt_name = self.get_prompt_name(task_metadata, prompt_type)
        options = {"prompt_name": prompt_name} if prompt_name else {}
        return self.model.encode(texts, batch_size=kwargs.get("batch_size", 32),
                                 show_progress_bar=kwargs.get("show_progress_bar"), **options)


def model_meta(encoder: Any, name: str | None = None, revision: str | None = None,
               languages: Sequence[str] | None = None) -> ModelMeta:
    """MTEB's metadata for a sentforge encoder; `revision` defaults to a hash of the weights."""
    parameters = _parameters(encoder)
    return ModelMeta(
        loader=None, name=_mteb_name(name or str(getattr(encoder, "name", type(encoder).__name__))),
        revision=revision or _content_revision(parameters), release_date=None,
        languages=list(languages) if languages else None,
        n_parameters=sum(p.numel() for p in parameters) or None, memory_usage_mb=None,
        max_tokens=_max_tokens(encoder), embed_dim=int(encoder.dim), license=None, open_weights=True,
        public_training_code=None, public_training_data=None, framework=["PyTorch", "Sentence Transformers"],
        similarity_fn_name=ScoringFunction.COSINE, use_instructions=bool(getattr(encoder, "prompts", None)),
        training_datasets=None,
    )


def with_local_data(task: Any, splits: Mapping[str, Mapping[str, Sequence[Any]]],
                    subset: str | None = None) -> Any:
    """Give an MTEB task its data from memory instead of the hub: `splits` maps a split name to columns
    (for STS tasks `sentence1`, `sentence2`, `score`; see the task's `column_names`). Returns the task."""
    missing = [split for split in task.metadata.eval_splits if split not in splits]
    if missing:
        raise ConfigError(f"MTEB task {task.metadata.name} evaluates split(s) {', '.join(missing)}; "
                          f"got {', '.join(splits) or 'none'}")
    data = DatasetDict({split: Dataset.from_dict({k: list(v) for k, v in columns.items()})
                        for split, columns in splits.items()})
    task.dataset = {subset: data} if subset else data
    task.data_loaded = True
    return task


def _parameters(encoder: Any) -> list[Any]:
    if isinstance(encoder, Encoder):
        return list(encoder.parameters())
    return [p for member in getattr(encoder, "members", []) if isinstance(member, Encoder)
            for p in member.parameters()]


def _content_revision(parameters: list[Any]) -> str | None:
    """The first 12 hex digits of a SHA-256 over the weights: equal weights, equal revision."""
    if not parameters:
        return None
    digest = hashlib.sha256()
    for tensor in parameters:
        digest.update(tensor.detach().cpu().contiguous().numpy().tobytes())
    return digest.hexdigest()[:12]


def _max_tokens(encoder: Any) -> int | None:
    members = getattr(encoder, "members", [encoder])
    limits = [getattr(member, "max_seq_length", None) for member in members]
    limits = [limit for limit in limits if limit]
    return min(limits) if limits else None


def _mteb_name(name: str) -> str:
    """MTEB wants `organisation/model`: hub ids stay as they are, local paths become `local/<folder>`."""
    shown = display_name(name)
    return shown if "/" in shown else f"local/{shown}"
