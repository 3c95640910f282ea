"""A training run for tests/training/test_checkpoint_resume.py, run as a subprocess that may be SIGKILLed.

usage: resume_worker.py MODEL_DIR CORPUS_FILE OUTPUT_DIR RESULT_FILE STEPS [--resume] [--kill-at-step N]
       [--kill-writing-checkpoint N]
"""

from __future__ import annotations

import argparse
import os
import signal
from pathlib import Path

import torch
from safetensors.torch import save_file

from sentforge import build_encoder
from sentforge.objectives import MaskedLanguageModeling
from sentforge.support.seed import set_seed
from sentforge.training import checkpoint
from sentforge.training.trainer import Trainer, TrainingConfig


def run(model_dir: str, corpus: str, output: str, steps: int, resume: bool = False, callbacks=()) -> dict:
    """Train the tiny MLM run; returns the encoder's final state dict."""
    set_seed(0)
    encoder = build_encoder(model_dir)
    objective = MaskedLanguageModeling(encoder)
    texts = Path(corpus).read_text(encoding="utf-8").splitlines()
    config = TrainingConfig(output_dir=output, steps=steps, batch_size=4, lr=3e-3, checkpoint_every=4,
                            keep_last=2, resume=resume, seed=7, log_every=1, show_progress=False,
                            optimizer="adamw", schedule="linear", warmup_steps=2)
    Trainer(encoder, objective, texts, config, callbacks=callbacks).train()
    return {k: v.contiguous() for k, v in encoder.state_dict().items()}


def main() -> None:
    parser = argparse.ArgumentParser()
    for name in ("model_dir", "corpus", "output", "result"):
        parser.add_argument(name)
    parser.add_argument("steps", type=int)
    parser.add_argument("--resume", action="store_true")
    parser.add_argument("--kill-at-step", type=int)
    parser.add_argument("--kill-writing-checkpoint", type=int)
    args = parser.parse_args()
    torch.set_num_threads(1)

    if args.kill_writing_checkpoint is not None:
        write_json = checkpoint._write_json

        def dying_write_json(path: Path, obj) -> None:
            # Die after every tensor file of this checkpoint is on disk, just before its manifest.
            if path.name == checkpoint.MANIFEST_FILE and obj["step"] == args.kill_writing_checkpoint:
                os.kill(os.getpid(), signal.SIGKILL)
            write_json(path, obj)

        checkpoint._write_json = dying_write_json

    def kill(state) -> None:
        if state.step == args.kill_at_step:
            os.kill(os.getpid(), signal.SIGKILL)

    save_file(run(args.model_dir, args.corpus, args.output, args.steps, args.resume, [kill]), args.result)


if __name__ == "__main__":
    main()
