"""The Ray engine on a local 2-worker Ray cluster writes the same shards as the single-process run (also from
.csv records spanning lines and .jsonl files with blank lines, which its workers read from byte offsets), an
interrupted Ray run resumes to the same result, and an input the workers cannot read, or read with other texts,
is one clear error."""

from __future__ import annotations

import csv
import json
import sys
import time

import numpy as np
import pytest
from conftest import CORPUS

from sentforge.scale import streaming
from sentforge.data.texts import read_texts
from sentforge.scale.engines import ChunkSource, run_engine
from sentforge.support.errors import ConfigError, InputFileError
from sentforge.scale.streaming import encode_file, load_vectors, read_manifest

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


@pytest.fixture(params=["csv", "jsonl"])
def structured_corpus(request, tmp_path):
    """CORPUS (numbered) as .csv with every third text over two lines inside quotes, or as .jsonl with blank lines."""
    texts = [f"{text} {i}".replace(" ", "\n", 1 if i % 3 == 0 else 0) for i, text in enumerate(CORPUS)]
    path = tmp_path / f"in.{request.param}"
    with open(path, "w", encoding="utf-8", newline="") as handle:
        if request.param == "csv":
            writer = csv.writer(handle, lineterminator="\n")
            writer.writerow(["id", "text"])
            writer.writerows([i, text] for i, text in enumerate(texts))
        else:
            handle.writelines(f"{json.dumps({'text': text})}\n" + "\n" * (i % 3) for i, text in enumerate(texts))
    return path


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
    caplog.set_level("INFO", logger="sentforge.scale.streaming")
    resumed = encode_file(str(tiny_bert_dir), corpus, tmp_path / "ray", chunk_size=7, engine="ray", workers=2)
    local = encode_file(str(tiny_bert_dir), corpus, tmp_path / "local", chunk_size=7)
    assert "resuming after 3 complete chunks" in caplog.text
    assert shard_checksums(resumed) == shard_checksums(local)


def test_ray_workers_read_csv_and_jsonl_records_like_the_single_process_run(tiny_bert_dir, structured_corpus,
                                                                         tmp_path, local_cluster):
    assert any("\n" in text for text in read_texts(structured_corpus))
    local = encode_file(str(tiny_bert_dir), structured_corpus, tmp_path / "local", chunk_size=7)
    distributed = encode_file(str(tiny_bert_dir), structured_corpus, tmp_path / "ray", chunk_size=7, engine="ray",
                              workers=2)
    np.testing.assert_array_equal(load_vectors(distributed), load_vectors(local))
    assert shard_checksums(distributed) == shard_checksums(local) and len(shard_checksums(local)) == 7


@pytest.mark.parametrize(("change", "message"), [
    ("remove", r"input file not found: .*in\.txt"),
    ("rewrite", r".*in\.txt:8: chunk 1 read from here differs from the one listed when the encode started"),
])
def test_an_input_the_workers_cannot_read_alike_is_one_clear_error(tiny_bert_dir, corpus, local_cluster, monkeypatch,
                                                                   change, message):
    original = ChunkSource.iter_starts

    def starts_then_input_changed(self):  # patched in this process only, not in the workers
        starts = list(original(self))
        if change == "remove":
            self.path.unlink()
        else:  # the first text of chunk 1 in capitals: same offsets, only the checksum tells
            lines = self.path.read_text(encoding="utf-8").splitlines(keepends=True)
            lines[7] = lines[7].upper()
            self.path.write_text("".join(lines), encoding="utf-8")
        yield from starts

    monkeypatch.setattr(ChunkSource, "iter_starts", starts_then_input_changed)
    results = run_engine("ray", str(tiny_bert_dir), None, ChunkSource(corpus, 7), {}, workers=2)
    with pytest.raises(InputFileError, match=rf"^{message}.* \(read by a Ray worker: .* same path on all of them\)$"):
        list(results)
    assert free_cpus_within(30) == 2


def test_missing_ray_is_a_config_error_naming_the_extra(tiny_bert_dir, corpus, monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` raises ImportError
    with pytest.raises(ConfigError, match=r"--engine ray needs Ray: pip install 'sentforge\[ray\]'"):
        next(run_engine("ray", str(tiny_bert_dir), None, ChunkSource(corpus, 7), {}, workers=2))
