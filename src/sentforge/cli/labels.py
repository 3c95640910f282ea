"""`sentforge labels`: a learning curve over the number of labels, pairs or examples per class (sentforge.labels)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from sentforge.cli.app import DeviceOpt, ModelOpt, SeedOpt, app
from sentforge.cli.run_options import (AddressOpt, BudgetMinutesOpt, CpusPerRunOpt, EngineOpt, GpusPerRunOpt,
                                       dev_option, output_option)
from sentforge.support.errors import ConfigError

DevOpt = dev_option("scores every run")
OutputOpt = output_option("report.md, report.json, learning-curve.png and the runs")


def _numbers(text: str | None, option: str, kind: type, expected: str) -> list | None:
    """The comma-separated numbers of an option, each of `kind`, or None when it is not given."""
    if text is None:
        return None
    try:
        return [kind(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise ConfigError(f"{option}: expected comma-separated {expected}, got {text!r}") from None


@app.command("labels")
def labels(
    model: ModelOpt,
    labelled: Annotated[Path, typer.Option(help="Positive pairs (sentence1, sentence2[, negative]), pairs with a "
                                                "label column some rows empty (PAUSE), scored pairs (sts), or "
                                                "class-labelled texts (text, label: trained by the setfit recipe, "
                                                "scored by dev accuracy).")],
    dev: DevOpt,
    output: OutputOpt,
    method: Annotated[Optional[str], typer.Option(help="mnrl, pause, sts or classes (default: decided by the "
                                                       "--labelled file).")] = None,
    fractions: Annotated[Optional[str], typer.Option(help="Comma-separated percentages of the labelled pairs "
                                                          "(default 5,10,25,50,100).")] = None,
    shots: Annotated[Optional[str], typer.Option(help="Class-labelled texts: comma-separated examples per class "
                                                      "of the sizes (default 2,4,8,16, up to the largest class).")
                     ] = None,
    repeats: Annotated[int, typer.Option(min=1, help="Seeded nested subsets per size.")] = 3,
    budget_minutes: BudgetMinutesOpt = 60.0,
    target: Annotated[Optional[float], typer.Option(help="A dev score: how many labels (examples per class) reach "
                                                         "it?")] = None,
    steps: Annotated[Optional[int], typer.Option(min=1, help="Optimizer steps of every run (default: --epochs "
                                                             "epochs of each subset).")] = None,
    epochs: Annotated[int, typer.Option(min=1, help="Epochs of each subset when --steps is not given.")] = 1,
    batch_size: Annotated[Optional[int], typer.Option(min=1, help="Batch size (default: the method's, at most the "
                                                                  "subset's size).")] = None,
    max_seq_length: Annotated[Optional[int], typer.Option(min=1, help="Tokens per text, in training and in dev "
                                                                      "scoring (default: the model's).")] = None,
    flat_points: Annotated[float, typer.Option(min=0.0, help="More labels are not worth it when 5× the labels add "
                                                             "fewer dev points than this.")] = 1.0,
    keep_checkpoints: Annotated[bool, typer.Option(help="Keep each finished run's training checkpoints (by default "
                                                        "only its model and metrics stay).")] = False,
    device: DeviceOpt = None,
    seed: SeedOpt = 0,
    engine: EngineOpt = "local",
    address: AddressOpt = None,
    cpus_per_run: CpusPerRunOpt = 1,
    gpus_per_run: GpusPerRunOpt = 0.0,
) -> None:
    """How many labels do I need? Train on nested subsets of the labelled pairs (or of k examples per class), score
    each on dev, fit
    a saturating curve and a straight line in log n, and report whether the score rises, which curve the
    runs support, the expected dev score with 2× and 5× the labels (with intervals), the labels a --target
    needs, and a check that predicts the largest size from the smaller ones. Rerun the same command to resume.
    With --engine ray the runs train side by side on a Ray cluster (docs/scale.md)."""
    from sentforge.learning_curve import labels as run_labels
    from sentforge.learning_curve.report import scored, target_words

    shares = _numbers(fractions, "--fractions", float, "percentages such as 5,10,25,50,100")
    per_class = _numbers(shots, "--shots", int, "whole numbers of examples per class such as 2,4,8,16")
    report = run_labels(model, labelled, dev, output, method=method, fractions=shares, shots=per_class,
                        repeats=repeats, budget_minutes=budget_minutes, target=target, steps=steps, epochs=epochs,
                        batch_size=batch_size, max_seq_length=max_seq_length, flat_points=flat_points,
                        keep_checkpoints=keep_checkpoints, seed=seed, device=device, engine=engine,
                        address=address, cpus_per_run=cpus_per_run, gpus_per_run=gpus_per_run)
    result = report["answer"]
    summary = (f"with 2x the labels: dev {report['metric']} {scored(result['at_2x'], result['basis'])}" if result
               else "no curve fitted")
    if result and "target" in result:
        summary += f"; target {target:g}: {target_words(result['target'], result, report['unit'])}"
    if report["short_runs"]:
        summary += "; runs too short to learn: cannot tell what more labels would add"
    typer.echo(f"{summary}; wrote {output}/report.md, {output}/report.json")
