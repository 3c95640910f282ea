"""The logistic-regression head: its probabilities are scikit-learn's `predict_proba` (multinomial and binary),
and it saves to safetensors and loads back exactly; a damaged or missing head file is one clear error."""

from __future__ import annotations

import numpy as np
import pytest

from sentforge.classification.head import HEAD_FILE, LogisticHead
from sentforge.support.errors import ModelFormatError


def data(classes, n=60, dim=5, seed=0):
    rng = np.random.default_rng(seed)
    labels = [classes[i % len(classes)] for i in range(n)]
    centres = {label: rng.standard_normal(dim) for label in classes}
    return np.stack([centres[label] + 0.8 * rng.standard_normal(dim) for label in labels]), labels


@pytest.mark.parametrize("classes", [["b", "a", "c", "d"], [3, 1], ["yes", "no"]])
def test_probabilities_are_scikit_learns(classes):
    from sklearn.linear_model import LogisticRegression

    vectors, labels = data(classes)
    head = LogisticHead.fit(vectors, labels, seed=0)
    reference = LogisticRegression(max_iter=1000, random_state=0).fit(vectors, labels)
    assert list(head.classes) == list(reference.classes_)
    np.testing.assert_allclose(head.predict_proba(vectors), reference.predict_proba(vectors), atol=1e-5)
    assert head.predict(vectors) == list(reference.predict(vectors))


def test_saved_head_loads_back_exactly(tmp_path):
    vectors, labels = data([7, 2, 5])
    head = LogisticHead.fit(vectors, labels)
    head.save(tmp_path)
    loaded = LogisticHead.load(tmp_path)
    assert loaded.classes == (2, 5, 7) and all(isinstance(c, int) for c in loaded.classes)
    np.testing.assert_array_equal(loaded.predict_proba(vectors), head.predict_proba(vectors))


def test_missing_or_damaged_head_is_a_model_format_error(tmp_path):
    with pytest.raises(ModelFormatError, match=f"no {HEAD_FILE}"):
        LogisticHead.load(tmp_path)
    (tmp_path / HEAD_FILE).write_bytes(b"not safetensors")
    with pytest.raises(ModelFormatError, match="not a sentforge classification head"):
        LogisticHead.load(tmp_path)
