"""Model cards: the metadata an Encoder carries about itself, written as a Hugging Face style README.md.

`ModelCardData` is what the code that builds or trains a model fills in (base model, training method
and hyper-parameters, datasets with their sizes, evaluation results). `Encoder.save` writes it twice:
`model_card.json` (read back by `Encoder.load`, so load -> save keeps it) and `README.md`, rendered
with the pipeline, dimension and prompts of the encoder itself.
"""

from __future__ import annotations

import dataclasses
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from huggingface_hub import EvalResult
from huggingface_hub import ModelCardData as HubCardData

from sentforge.support.errors import ConfigError, ModelFormatError
from sentforge.support.io import atomic_file

if TYPE_CHECKING:
    from sentforge.encoder import Encoder

CARD_DATA_FILE = "model_card.json"
HUB_ID = re.compile(r"^[\w.-]+/[\w.-]+$")
README_FILE = "README.md"


@dataclass
class DatasetInfo:
    """A dataset a model was trained or calibrated on: its name and size, never its contents."""

    name: str
    size: int | None = None
    role: str = "training"


@dataclass
class EvaluationResult:
    """One task's main score, as `sentforge.evaluate` reports it."""

    task: str
    metric: str
    value: float
    family: str = ""


@dataclass
class ModelCardData:
    """What a model card says beyond the pipeline itself. Fill it in where the model is made:

        encoder.card.base_model = "bert-base-uncased"
        encoder.card.set_training("tsdae", {"lr": 3e-5, "batch_size": 8, "steps": 1000})
        encoder.card.add_dataset("askubuntu", size=10_000, role="unlabelled corpus")
        encoder.card.add_evaluation(report)        # the dict `sentforge.evaluate` returns
    """

    base_model: str | None = None
    training_method: str | None = None
    hyperparameters: dict[str, Any] = field(default_factory=dict)
    datasets: list[DatasetInfo] = field(default_factory=list)
    evaluation: list[EvaluationResult] = field(default_factory=list)
    language: list[str] = field(default_factory=list)
    license: str | None = None
    description: str = ""

    def set_training(self, method: str, hyperparameters: dict[str, Any]) -> None:
        self.training_method = method
        self.hyperparameters = dict(hyperparameters)

    def add_dataset(self, name: str, size: int | None = None, role: str = "training") -> None:
        self.datasets = [d for d in self.datasets if (d.name, d.role) != (name, role)]
        self.datasets.append(DatasetInfo(name, size, role))

    def add_evaluation(self, report: dict[str, Any]) -> None:
        """Add (or replace, per task) the main score of each task of a `sentforge.evaluate` report."""
        for task, entry in report.get("tasks", {}).items():
            self.evaluation = [r for r in self.evaluation if r.task != task]
            self.evaluation.append(EvaluationResult(task, entry["main_metric"], float(entry["main_score"]),
                                                    entry.get("family", "")))

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ModelCardData:
        try:
            return cls(**(data | {"datasets": [DatasetInfo(**d) for d in data.get("datasets", [])],
                                  "evaluation": [EvaluationResult(**r) for r in data.get("evaluation", [])]}))
        except TypeError as err:
            raise ModelFormatError(f"{CARD_DATA_FILE}: unexpected content ({err})") from None


def read_card_data(model_dir: Path) -> ModelCardData:
    """The card data saved in a model directory (empty when it has none, e.g. a sentence-transformers one)."""
    path = model_dir / CARD_DATA_FILE
    if not path.exists():
        return ModelCardData()
    try:
        return ModelCardData.from_dict(json.loads(path.read_text(encoding="utf-8")))
    except json.JSONDecodeError as err:
        raise ModelFormatError(f"{path}: invalid JSON ({err})") from None


def write_model_card(model_dir: Path, encoder: Encoder) -> None:
    """Write `model_card.json` and `README.md` of `encoder` into `model_dir` (each file atomically)."""
    with atomic_file(model_dir / CARD_DATA_FILE, "w") as handle:
        json.dump(encoder.card.to_dict(), handle, indent=2)
        handle.write("\n")
    with atomic_file(model_dir / README_FILE, "w") as handle:
        handle.write(render_model_card(encoder))


def check_card_target(model_dir: str | Path) -> Path:
    """Refuse early a model spec whose card cannot be updated (not a saved encoder directory)."""
    model_dir = Path(model_dir)
    if not (model_dir / "modules.json").is_file():
        raise ConfigError(f"--add-to-card: {model_dir} is not a saved model directory (no modules.json); "
                          "only a directory's model card can be updated")
    return model_dir


def display_name(name: str) -> str:
    """A model's name for people: a hub id as it is, a local path by its last folder (no machine paths)."""
    if HUB_ID.match(name) and not Path(name).expanduser().is_dir():
        return name
    return Path(name).name or "model"


def render_model_card(encoder: Encoder) -> str:
    card = encoder.card
    title = display_name(encoder.name)
    hub = HubCardData(
        model_name=title, base_model=card.base_model, language=card.language or None,
        license=card.license, library_name="sentence-transformers", pipeline_tag="sentence-similarity",
        tags=["sentence-transformers", "sentence-similarity", "feature-extraction", "sentforge"]
             + ([card.training_method] if card.training_method else []),
        datasets=sorted({d.name for d in card.datasets}) or None,
        eval_results=[EvalResult(task_type=r.family or "evaluation", dataset_type=r.task.lower(), dataset_name=r.task,
                                 metric_type=r.metric, metric_value=r.value) for r in card.evaluation] or None,
    )
    lines = ["---", hub.to_yaml(), "---", "", f"# {title}", ""]
    if card.description:
        lines += [card.description, ""]
    portable = all(m.type_name.startswith("sentence_transformers.") for m in encoder)
    lines += [f"A sentence encoder made with sentforge: it maps text to {encoder.dim}-dimensional vectors. "
              + ("The directory loads in sentforge and in sentence-transformers." if portable else
                 "It uses sentforge-only modules: sentence-transformers loads it only with sentforge installed "
                 "and `trust_remote_code=True`."), "",
              "## Model details", "",
              f"- **Base model:** {card.base_model or 'not recorded'}",
              f"- **Output dimension:** {encoder.dim}",
              f"- **Maximum sequence length:** {encoder.max_seq_length or 'unbounded'} tokens",
              f"- **Similarity function:** {encoder.similarity_fn_name}"]
    if encoder.prompts:
        lines += ["- **Prompts:** " + ", ".join(f"`{k}`: {v!r}" for k, v in encoder.prompts.items())
                  + (f" (default: `{encoder.default_prompt_name}`)" if encoder.default_prompt_name else "")]
    lines += ["", "### Pipeline", ""]
    lines += _table(("#", "Module", "Settings"), [(i, _module_name(m), _settings(m)) for i, m in enumerate(encoder)])
    lines += ["", "## Training", ""]
    if card.training_method:
        lines += [f"Method: **{card.training_method}**", ""]
        lines += _table(("Hyper-parameter", "Value"), sorted(card.hyperparameters.items()))
    else:
        lines += ["Not trained by sentforge (or the training was not recorded)."]
    if card.datasets:
        lines += ["", "### Data", ""]
        lines += _table(("Dataset", "Role", "Size"),
                        [(d.name, d.role, "unknown" if d.size is None else f"{d.size:,}") for d in card.datasets])
    lines += ["", "## Evaluation", ""]
    if card.evaluation:
        lines += _table(("Task", "Family", "Metric", "Score"),
                        [(r.task, r.family, r.metric, f"{r.value:.2f}") for r in card.evaluation])
    else:
        lines += ["No evaluation recorded. `sentforge eval --model DIR --output results.json --add-to-card` adds one."]
    lines += ["", "## Usage", "", "```python", "import sentforge", "",
              'model = sentforge.load("path/to/this/directory")',
              'vectors = model.encode(["A sentence.", "Another one."], normalize_embeddings=True)', "```", ""]
    return "\n".join(lines)


def _module_name(module: Any) -> str:
    inner = getattr(module, "model", None)
    return type(module).__name__ + (f" ({type(inner).__name__})" if inner is not None else "")


def _settings(module: Any) -> str:
    """The module's saved configuration, without the switched-off flags."""
    config = {key: value for key, value in module.config().items() if value is not False}
    return ", ".join(f"{key}={value}" for key, value in config.items()) or "-"


def _table(header: tuple[str, ...], rows: list[tuple[Any, ...]]) -> list[str]:
    return ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)] + [
        "| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
