"""Streaming encode: chunked output equals Encoder.encode, a kill -9 then rerun equals an uninterrupted
run, shards are checksummed, precisions match quantize_embeddings, and memory does not grow with the input."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import sentforge
from sentforge.support.errors import InputFileError, OutputExistsError
from sentforge.interface.quantization import quantization_ranges, quantize_embeddings
from sentforge.scale.streaming import encode_file, iter_shards, load_vectors, read_manifest

from conftest import CORPUS, REPO, assert_one_line_error, run_cli

pytestmark = pytest.mark.usefixtures("one_torch_thread")
WORKER = Path(__file__).parents[1] / "helpers" / "stream_worker.py"


@pytest.fixture()
def corpus_file(tmp_path) -> Path:
    path = tmp_path / "in.txt"
    path.write_text("\n".join(CORPUS[:45]) + "\n", encoding="utf-8")
    return path


def chunked_reference(model_dir, texts, chunk_size):
    encoder = sentforge.load(model_dir)
    return np.concatenate([encoder.encode(texts[i:i + chunk_size]) for i in range(0, len(texts), chunk_size)])


@pytest.mark.parametrize("output_name", ["v.npy", "shards"])
def test_chunked_output_equals_encode_per_chunk(tiny_bert_dir, corpus_file, tmp_path, output_name):
    output = encode_file(str(tiny_bert_dir), corpus_file, tmp_path / output_name, chunk_size=10)
    expected = chunked_reference(tiny_bert_dir, CORPUS[:45], 10)
    np.testing.assert_array_equal(load_vectors(output), expected)
    assert not any(p.name.startswith(".") for p in tmp_path.iterdir()), "partial files left behind"


def test_single_chunk_equals_whole_file_encode(tiny_bert_dir, corpus_file, tmp_path):
    output = encode_file(str(tiny_bert_dir), corpus_file, tmp_path / "v.npy")
    np.testing.assert_array_equal(np.load(output), sentforge.load(tiny_bert_dir).encode(CORPUS[:45]))


def test_manifest_lists_every_shard_with_rows(tiny_bert_dir, corpus_file, tmp_path):
    output = encode_file(str(tiny_bert_dir), corpus_file, tmp_path / "shards", chunk_size=20)
    manifest = read_manifest(output)
    assert [s["rows"] for s in manifest["shards"]] == [20, 20, 5]
    assert manifest["complete"] and manifest["rows"] == 45 and manifest["columns"] == 32
    assert manifest["job"]["model"]["dim"] == 32


def run_worker(args, kill_in_chunk=None, rss_file=None):
    command = [sys.executable, str(WORKER)]
    if kill_in_chunk is not None:
        command += ["--kill-in-chunk", str(kill_in_chunk)]
    if rss_file is not None:
        command += ["--rss-file", str(rss_file)]
    env = {**os.environ, "PYTHONPATH": f"{REPO / 'src'}{os.pathsep}{WORKER.parent}", "OMP_NUM_THREADS": "1"}
    return subprocess.run([*command, "--", *map(str, args)], env=env, capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("output_name", ["v.npy", "shards"])
def test_kill_at_half_then_rerun_equals_uninterrupted_run(tiny_bert_dir, corpus_file, tmp_path, output_name):
    args = ["encode", corpus_file, "-m", tiny_bert_dir, "--chunk-size", "5", "-o", tmp_path / "a" / output_name]
    killed = run_worker(args, kill_in_chunk=4)
    assert killed.returncode == -9, killed.stderr
    assert not (tmp_path / "a" / output_name).exists()
    resumed = run_worker(args)
    assert resumed.returncode == 0, resumed.stderr
    assert "resuming after 4 complete chunks" in resumed.stderr
    uninterrupted = run_worker(["encode", corpus_file, "-m", tiny_bert_dir, "--chunk-size", "5",
                                "-o", tmp_path / "b" / output_name])
    assert uninterrupted.returncode == 0, uninterrupted.stderr
    np.testing.assert_array_equal(load_vectors(tmp_path / "a" / output_name),
                                  load_vectors(tmp_path / "b" / output_name))


def test_unfinished_run_with_other_settings_is_refused(tiny_bert_dir, corpus_file, tmp_path, capsys):
    args = ["encode", corpus_file, "-m", tiny_bert_dir, "--chunk-size", "5", "-o", tmp_path / "v.npy"]
    assert run_worker(args, kill_in_chunk=2).returncode == -9
    code, _, err = run_cli([*args[:-4], "--chunk-size", "7", "-o", tmp_path / "v.npy"], capsys)
    assert_one_line_error(code, err, "chunk_size", "--overwrite")
    code, _, _ = run_cli([*args[:-4], "--chunk-size", "7", "-o", tmp_path / "v.npy", "--overwrite"], capsys)
    assert code == 0
    np.testing.assert_array_equal(np.load(tmp_path / "v.npy"), chunked_reference(tiny_bert_dir, CORPUS[:45], 7))


def test_finished_output_is_not_overwritten_without_flag(tiny_bert_dir, corpus_file, tmp_path):
    encode_file(str(tiny_bert_dir), corpus_file, tmp_path / "shards", chunk_size=20)
    with pytest.raises(OutputExistsError):
        encode_file(str(tiny_bert_dir), corpus_file, tmp_path / "shards", chunk_size=20)


def test_corrupt_shard_is_detected(tiny_bert_dir, corpus_file, tmp_path, capsys):
    output = encode_file(str(tiny_bert_dir), corpus_file, tmp_path / "shards", chunk_size=20)
    shard = output / "shard-000001.npy"
    data = bytearray(shard.read_bytes())
    data[-3] ^= 0xFF
    shard.write_bytes(bytes(data))
    with pytest.raises(InputFileError, match="shard-000001.npy: checksum differs"):
        list(iter_shards(output))
    code, _, err = run_cli(["index", "build", output, "--texts", corpus_file, "-m", tiny_bert_dir,
                            "-o", tmp_path / "index"], capsys)
    assert_one_line_error(code, err, "shard-000001.npy", "corrupt")


@pytest.mark.parametrize("precision", ["float16", "int8", "uint8", "binary", "ubinary"])
def test_precisions_match_quantize_embeddings(tiny_bert_dir, corpus_file, tmp_path, precision):
    output = encode_file(str(tiny_bert_dir), corpus_file, tmp_path / "v.npy", chunk_size=20, precision=precision)
    floats = chunked_reference(tiny_bert_dir, CORPUS[:45], 20)
    if precision == "float16":
        expected = floats.astype(np.float16)
    else:  # int8 buckets are calibrated on the first chunk and shared by all chunks
        expected = quantize_embeddings(floats, precision, ranges=quantization_ranges(floats[:20]))
    np.testing.assert_array_equal(np.load(output), expected)


def test_bad_precision_and_engine_are_one_line_errors(tiny_bert_dir, corpus_file, tmp_path, capsys):
    code, _, err = run_cli(["encode", corpus_file, "-m", tiny_bert_dir, "-o", tmp_path / "v.npy",
                            "--precision", "int4"], capsys)
    assert_one_line_error(code, err, "--precision", "int4")
    code, _, err = run_cli(["encode", corpus_file, "-m", tiny_bert_dir, "-o", tmp_path / "v.npy",
                            "--engine", "spark"], capsys)
    assert_one_line_error(code, err, "--engine", "spark")
    assert not (tmp_path / "v.npy").exists()


def test_memory_stays_bounded_as_input_grows(tmp_path):
    """Peak RSS of encoding 20,000 vs 200,000 lines differs by far less than keeping the input would cost."""
    rng = np.random.default_rng(0)
    words = [f"w{i}" for i in range(50)]
    (tmp_path / "glove.txt").write_text("".join(f"{w} {' '.join(map(str, rng.normal(size=64).round(4)))}\n"
                                                for w in words), encoding="utf-8")
    peaks = {}
    for lines in (20_000, 200_000):
        corpus = tmp_path / f"in{lines}.txt"
        corpus.write_text("".join(" ".join(rng.choice(words, 6)) + "\n" for _ in range(lines)), encoding="utf-8")
        rss = tmp_path / f"rss{lines}"
        result = run_worker(["encode", corpus, "-m", f"glove:{tmp_path / 'glove.txt'}", "--chunk-size", "5000",
                             "-o", tmp_path / f"v{lines}.npy"], rss_file=rss)
        assert result.returncode == 0, result.stderr
        assert np.load(tmp_path / f"v{lines}.npy", mmap_mode="r").shape == (lines, 64)
        peaks[lines] = int(rss.read_text()) * 1024  # ru_maxrss is in KiB on Linux
    # 180,000 more lines held as texts, token ids and float32 vectors would add well over 100 MB.
    assert peaks[200_000] - peaks[20_000] < 30 * 2**20, peaks


def test_a_second_encode_to_the_same_output_is_refused_while_the_first_runs(tmp_path, capsys):
    """Two runs to one path would share its partial files: the second is refused, the first is untouched."""
    import fcntl

    texts = tmp_path / "texts.txt"
    texts.write_text("a cat\na dog\n", encoding="utf-8")
    output = tmp_path / "v.npy"
    with open(tmp_path / ".v.npy.lock", "a") as held:  # what a running encode holds
        fcntl.flock(held, fcntl.LOCK_EX)
        code, _, err = run_cli(["encode", texts, "--output", output, "--model", "glove-6B-50d"], capsys)
    assert_one_line_error(code, err, "another sentforge encode is writing", str(output))
    assert not output.exists()


def test_an_output_that_appears_while_encoding_is_not_replaced(tmp_path):
    from sentforge.scale.streaming import NpyWriter

    output = tmp_path / "v.npy"
    writer = NpyWriter(output)
    job = {"rows": 1}
    state = writer.start(job, (1, 2), np.dtype(np.float32), overwrite=False)
    writer.write(state, np.ones((1, 2), np.float32))
    output.write_bytes(b"someone else's result")
    with pytest.raises(OutputExistsError, match="appeared while encoding"):
        writer.finish(state, overwrite=False)
    assert output.read_bytes() == b"someone else's result"
    assert np.load(writer.partial).tolist() == [[1.0, 1.0]]
