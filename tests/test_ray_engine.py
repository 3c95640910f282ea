"""The Ray engine on a local 2-worker Ray cluster writes the same shards as the single-process run, and an
interrupted Ray run resumes to the same result."""

from __future__ import annotations

import time

import numpy as np
import pytest
from conftest import CORPUS

from sentforge import streaming
from sentforge.streaming import encode_file, load_vectors, read_manifest

ray = pytest.importorskip("ray")
pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.fixture(scope="module")
def local_cluster():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


@pytest.fixture()
def corpus(tmp_path):
    texts = [f"{text} {i}" for i, text in enumerate(CORPUS)]
    (tmp_path / "in.txt").write_text("\n".join(texts) + "\n", encoding="utf-8")
    return tmp_path / "in.txt"


def free_cpus_within(seconds: float) -> float:
    """The cluster's free CPUs once all are free, or when `seconds` have passed (Ray frees them asynchronously)."""
    deadline = time.monotonic() + seconds
    while (free := ray.available_resources().get("CPU", 0)) < 2 and time.monotonic() < deadline:
        time.sleep(0.2)
    return free


def shard_checksums(folder):
    return [s["sha256"] for s in read_manifest(folder)["shards"]]


def test_two_ray_workers_write_the_single_process_vectors(tiny_bert_dir, corpus, tmp_path, local_cluster):
    local = encode_file(str(tiny_bert_dir), corpus, tmp_path / "local", chunk_size=7)
    distributed = encode_file(str(tiny_bert_dir), corpus, tmp_path / "ray", chunk_size=7, engine="ray", workers=2)
    np.testing.assert_array_equal(load_vectors(distributed), load_vectors(local))
    assert shard_checksums(distributed) == shard_checksums(local) and len(shard_checksums(local)) == 7


def test_interrupted_ray_run_resumes_to_the_single_process_vectors(tiny_bert_dir, corpus, tmp_path, local_cluster,
                                                                  monkeypatch, caplog):
    original = streaming.ShardWriter.write

    def interrupted(self, state, chunk):
        if state["chunks_done"] == 3:
            raise KeyboardInterrupt
        original(self, state, chunk)

    monkeypatch.setattr(streaming.ShardWriter, "write", interrupted)
    with pytest.raises(KeyboardInterrupt):
        encode_file(str(tiny_bert_dir), corpus, tmp_path / "ray", chunk_size=7, engine="ray", workers=2)
    assert free_cpus_within(30) == 2  # the interrupted run's actors were released
    monkeypatch.setattr(streaming.ShardWriter, "write", original)
    caplog.set_level("INFO", logger="sentforge.streaming")
    resumed = encode_file(str(tiny_bert_dir), corpus, tmp_path / "ray", chunk_size=7, engine="ray", workers=2)
    local = encode_file(str(tiny_bert_dir), corpus, tmp_path / "local", chunk_size=7)
    assert "resuming after 3 complete chunks" in caplog.text
    assert shard_checksums(resumed) == shard_checksums(local)
