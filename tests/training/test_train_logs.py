"""What a person sees of a training run: loss and throughput in the log when the output is not a terminal,
the dev set scored before and after training with `--dev` alone, the card titled after the output, no
dependency chatter, and `--version`."""

from __future__ import annotations

import json
import logging
import os
import re
import subprocess
import sys

import pytest

import sentforge

from conftest import CORPUS, REPO, run_cli

pytestmark = pytest.mark.usefixtures("one_torch_thread")
TEXTS = sorted(set(CORPUS))


@pytest.fixture()
def data(tmp_path):
    (tmp_path / "pairs.tsv").write_text("anchor\tpositive\n" + "".join(f"{t}\t{t} indeed\n" for t in TEXTS),
                                        encoding="utf-8")
    rows = [(TEXTS[0], TEXTS[0] + " indeed", 1), (TEXTS[1], TEXTS[2], 0), (TEXTS[3], TEXTS[3] + " indeed", 1),
            (TEXTS[4], TEXTS[5], 0)]
    (tmp_path / "dev.jsonl").write_text("".join(json.dumps({"sentence1": a, "sentence2": b, "label": label}) + "\n"
                                                for a, b, label in rows), encoding="utf-8")
    return tmp_path


def test_piped_training_logs_loss_and_throughput_and_dev_alone_scores_start_and_end(tiny_bert_dir, data):
    env = {**os.environ, "PYTHONPATH": str(REPO / "src"), "OMP_NUM_THREADS": "1"}
    result = subprocess.run([sys.executable, "-m", "sentforge", "train", "mnrl", "-m", str(tiny_bert_dir),
                             "--corpus", str(data / "pairs.tsv"), "--dev", str(data / "dev.jsonl"),
                             "-o", str(data / "my-model"), "--steps", "6", "--batch-size", "4", "--log-every", "3"],
                            capture_output=True, text=True, env=env, timeout=120)
    assert result.returncode == 0, result.stderr
    lines = result.stderr.splitlines()
    progress = [line for line in lines if re.search(r"step \d+/6, loss [\d.]+, lr \S+, [\d.]+ steps/s "
                                                    r"\([\d.]+ examples/s\)", line)]
    assert [re.search(r"step (\d+)/", line).group(1) for line in progress] == ["3", "6"]
    assert all(line.startswith("INFO sentforge.training.trainer:") for line in progress)
    # the log's loss is the mean of the window's steps in metrics.jsonl
    records = [json.loads(line) for line in (data / "my-model" / "training" / "metrics.jsonl").read_text().splitlines()]
    windows = [r for r in records if "loss" in r]
    assert [r["step"] for r in windows] == [3, 6]
    assert f"loss {windows[0]['loss']:.4f}" in progress[0]
    summary = json.loads((data / "my-model" / "train.json").read_text(encoding="utf-8"))
    assert [e["step"] for e in summary["evaluations"]] == [0, 6]
    assert not any("DEBUG" in line or "Writing model shards" in line for line in lines), result.stderr
    card = (data / "my-model" / "README.md").read_text(encoding="utf-8")
    assert "\n# my-model\n" in card and "base_model: " in card


def test_dev_alone_in_python_scores_before_and_after(tiny_bert_dir, data):
    from sentforge.evaluation import load_dataset
    from sentforge.recipes.api import run_recipe

    _, summary = run_recipe("mnrl", tiny_bert_dir, data / "pairs.tsv", data / "out", steps=4, batch_size=4,
                            evaluator=load_dataset(data / "dev.jsonl"), select="ap")
    assert [e["step"] for e in summary["evaluations"]] == [0, 4]
    assert summary["best"]["step"] in (0, 4)
    assert sentforge.load(data / "out").name.endswith("out")



def test_a_dev_file_in_python_selects_as_the_dev_option_of_the_cli(tiny_bert_dir, data, capsys):
    from sentforge.recipes.api import run_recipe
    from sentforge.support.errors import ConfigError

    code, _, err = run_cli(["train", "mnrl", "-m", tiny_bert_dir, "--corpus", data / "pairs.tsv", "--dev",
                            data / "dev.jsonl", "-o", data / "cli", "--steps", "4", "--batch-size", "4",
                            "--eval-every", "2"], capsys)
    assert code == 0, err
    _, summary = run_recipe("mnrl", str(tiny_bert_dir), data / "pairs.tsv", data / "python", dev=data / "dev.jsonl",
                            eval_every=2, steps=4, batch_size=4)
    cli = json.loads((data / "cli" / "train.json").read_text(encoding="utf-8"))
    assert summary["best"]["metric"] == cli["best"]["metric"] == "ap"
    assert [e["step"] for e in summary["evaluations"]] == [e["step"] for e in cli["evaluations"]] == [2, 4]
    # the dev file is never inside the output, checked before it is read
    with pytest.raises(ConfigError, match="lies inside --output"):
        run_recipe("mnrl", str(tiny_bert_dir), data / "pairs.tsv", data, dev=data / "dev.jsonl", steps=1)
    assert (data / "dev.jsonl").is_file()


def test_eval_every_without_an_evaluator_is_refused(tiny_bert_dir, data):
    from sentforge.support.errors import ConfigError

    with pytest.raises(ConfigError, match=r"eval_every \(--eval-every\) needs an evaluator"):
        sentforge.train("mnrl", tiny_bert_dir, data / "pairs.tsv", data / "out", steps=2, eval_every=1)


def test_version(capsys):
    code, out, _ = run_cli(["--version"], capsys)
    assert code == 0 and out.strip() == f"sentforge {sentforge.__version__}"


def test_dependencies_stay_quiet_at_every_sentforge_level(capsys):
    run_cli(["--log-level", "DEBUG", "index", "build", "--help"], capsys)
    assert logging.getLogger("sentforge").isEnabledFor(logging.DEBUG)
    for name in ("urllib3", "filelock", "transformers", "torch", "datasets", "faiss"):
        assert not logging.getLogger(name).isEnabledFor(logging.INFO), name


def test_a_bad_training_setting_fails_before_the_model_loads(tmp_path, capsys, data):
    code, _, err = run_cli(["train", "mnrl", "-m", tmp_path / "no-such-model", "--corpus", data / "pairs.tsv",
                            "-o", tmp_path / "out", "--lr", "-1", "--checkpoint-every", "2"], capsys)
    from conftest import assert_one_line_error

    assert_one_line_error(code, err, "lr (--lr) must be in (0, 1], got -1.0")
    assert not (tmp_path / "out").exists()
