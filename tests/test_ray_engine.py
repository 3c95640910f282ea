"""The Ray engine on a local 2-worker Ray cluster writes the same shards as the single-process run."""

from __future__ import annotations

import numpy as np
import pytest

from sentforge.streaming import encode_file, load_vectors, read_manifest

from conftest import CORPUS

ray = pytest.importorskip("ray")
pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.fixture()
def local_cluster():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def test_two_ray_workers_write_the_single_process_vectors(tiny_bert_dir, tmp_path, local_cluster):
    texts = [f"{text} {i}" for i, text in enumerate(CORPUS)]
    (tmp_path / "in.txt").write_text("\n".join(texts) + "\n", encoding="utf-8")
    local = encode_file(str(tiny_bert_dir), tmp_path / "in.txt", tmp_path / "local", chunk_size=7)
    distributed = encode_file(str(tiny_bert_dir), tmp_path / "in.txt", tmp_path / "ray", chunk_size=7,
                              engine="ray", workers=2)
    np.testing.assert_array_equal(load_vectors(distributed), load_vectors(local))
    shards = [s["sha256"] for s in read_manifest(distributed)["shards"]]
    assert shards == [s["sha256"] for s in read_manifest(local)["shards"]] and len(shards) == 7
