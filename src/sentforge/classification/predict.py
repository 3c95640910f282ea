"""`sentforge predict`: the class of every text of a file by a saved classifier, written as one signed JSON file."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from sentforge.data.texts import check_text_file, read_texts
from sentforge.support.errors import InputFileError
from sentforge.support.io import atomic_file
from sentforge.support.output_guard import guard_output, locked_output, signed_json

PREDICT = "predict"  # the command family named in the lock and the output's signature


@locked_output(PREDICT)
def predict_file(model: str | os.PathLike, input: str | os.PathLike, output: str | os.PathLike, *,
                 field: str | None = None, column: str | None = None, batch_size: int = 64,
                 overwrite: bool = False, device: str | None = None,
                 show_progress: bool | None = None) -> dict[str, Any]:
    """Predict the class of each text of `input` (.txt: one per line; .jsonl: `field`, .csv/.tsv: `column`,
    default "text") with the classifier directory `model`; write `output` (JSON: the classes, and per text its
    class and the probability of each class, in the classes' order) and return what it holds."""
    from sentforge.classification.classifier import SentenceClassifier

    input, output = check_text_file(input), Path(output)
    guard_output(output, [("input", input), ("model", model)], PREDICT, overwrite, file_format="json")
    texts = read_texts(input, field, column)
    if not texts:
        raise InputFileError(f"{input}: no texts")
    classifier = SentenceClassifier.load(model, device=device)
    classifier.batch_size = batch_size
    probabilities = classifier.predict_proba(texts, show_progress=show_progress)
    classes = list(classifier.classes)
    report = signed_json({"model": str(model), "input": str(input), "classes": classes, "predictions": [
        {"text": text, "label": classes[int(row.argmax())], "probabilities": [round(float(p), 6) for p in row]}
        for text, row in zip(texts, probabilities)]}, PREDICT)
    with atomic_file(output, "w", overwrite=overwrite) as handle:
        json.dump(report, handle, ensure_ascii=False, indent=1)
        handle.write("\n")
    return report
