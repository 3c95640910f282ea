"""`sentforge adapt`: adapt start encoders to a domain and keep the best by a dev score (sentforge.adapt)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated, Optional

import typer

from sentforge.cli.app import DeviceOpt, SeedOpt, app
from sentforge.cli.run_options import (AddressOpt, BudgetMinutesOpt, CpusPerRunOpt, EngineOpt, GpusPerRunOpt,
                                       dev_option, output_option)

DevOpt = dev_option("chooses the model")
OutputOpt = output_option("model/, report.md, report.json, dev-curve.png and the candidates' runs")


@app.command("adapt")
def adapt(
    model: Annotated[list[str], typer.Option("--model", "-m", help="Start model spec; repeat for several.")],
    dev: DevOpt,
    output: OutputOpt,
    unlabelled: Annotated[Optional[Path], typer.Option(help="Domain texts: one per line (.txt), or a .jsonl corpus "
                                                            "(optional with class-labelled --labelled texts, which "
                                                            "then stand in).")] = None,
    labelled: Annotated[Optional[Path], typer.Option(help="Positive pairs (sentence1, sentence2[, negative]); pairs "
                                                          "with a label column, some rows empty (PAUSE); or "
                                                          "class-labelled texts (text, label: SetFit, scored by "
                                                          "dev accuracy, the model saved with its head).")] = None,
    test: Annotated[Optional[Path], typer.Option(help="Test set: scored and reported, never used for a "
                                                      "choice.")] = None,
    cross_encoder: Annotated[Optional[Path], typer.Option(help="A trained cross-encoder (trained without dev or "
                                                               "test texts): with labelled pairs, adds the augsbert "
                                                               "candidate, trained on the pairs and on silver pairs "
                                                               "it scores, and the rerank pipeline (the dev leader "
                                                               "re-ranked by it).")] = None,
    budget_minutes: BudgetMinutesOpt = 60.0,
    member: Annotated[list[str], typer.Option(help="An extra encoder for the meta-embeddings; "
                                                   "repeatable.")] = [],  # noqa: B006 (typer reads the default)
    candidates: Annotated[Optional[str], typer.Option(help="Comma-separated candidates to run (default: all "
                                                           "for the data): tsdae, mnrl, setfit, tsdae+mnrl, "
                                                           "tsdae+setfit, pause, simcse, ct, meta-concat, meta-gcca "
                                                           "(augsbert and rerank with --cross-encoder; "
                                                           "tsdae+augsbert, marginmse, mnrl+marginmse, "
                                                           "tsdae+marginmse, regression and static only when "
                                                           "named); "
                                                           "the start model always runs.")] = None,
    eval_every: Annotated[Optional[int], typer.Option(min=1, help="Score each trained candidate on dev every K "
                                                                  "steps (default: about every 2.5 minutes of its "
                                                                  "training, from its timed first steps).")] = None,
    max_epochs: Annotated[int, typer.Option(min=1, help="At most this many epochs of each candidate's "
                                                        "data (TSDAE paper: 10).")] = 10,
    meta_members: Annotated[int, typer.Option(min=0, help="Best candidates combined in the "
                                                          "meta-embeddings.")] = 2,
    select: Annotated[str, typer.Option(help="labels-first: a candidate replaces the start model only when the 95 "
                                             "% interval of its dev gain lies above 0; among those the highest dev "
                                             "score wins, unless one that is not significantly worse (paired on the "
                                             "dev units) learnt from your labelled pairs where the leader did not, "
                                             "or, of the same kind of signal, costs less to run or was made in "
                                             "fewer training stages; simplest: the same without the labels; "
                                             "significant: the same without the labels and the training stages; "
                                             "cross-fitted: significant's rule on dev scores where each unit is "
                                             "scored by a checkpoint chosen on the other half of the units (no gain "
                                             "from choosing among many checkpoints); best: the highest dev score.")
                      ] = "labels-first",
    min_texts_per_second: Annotated[Optional[float], typer.Option(
        help="Only candidates that encode at least this many of your texts per second on this machine are "
             "eligible; rerun with another value to choose again from the finished candidates.")] = None,
    keep_dev_texts: Annotated[bool, typer.Option(help="Train on the unlabelled texts and pairs that are dev or test "
                                                      "texts or near copies (dropped by default); dev scores of the "
                                                      "candidates trained on them are then optimistic.")] = False,
    race: Annotated[bool, typer.Option(help="Stop a trained candidate at a dev evaluation where it is more than a "
                                            "point below the start model (or the leader, and no longer improving; "
                                            "95 % paired intervals); its time goes to the others.")] = True,
    keep_checkpoints: Annotated[bool, typer.Option(help="Keep the candidates' training checkpoints once the run is "
                                                        "done (by default each keeps its model and metrics).")
                                ] = False,
    keep: Annotated[str, typer.Option(help="selected: once the report is written, only OUTPUT/model and the "
                                           "report (a rerun can then not choose another candidate); all: every "
                                           "candidate's model under OUTPUT/runs too (gigabytes).")] = "selected",
    device: DeviceOpt = None,
    seed: SeedOpt = 0,
    engine: EngineOpt = "local",
    address: AddressOpt = None,
    cpus_per_run: CpusPerRunOpt = 1,
    gpus_per_run: GpusPerRunOpt = 0.0,
) -> None:
    """Adapt an encoder to a domain: run TSDAE, SimCSE, CT, supervised MNRL, PAUSE, TSDAE then MNRL and
    meta-embeddings (with class-labelled texts: TSDAE, SetFit and TSDAE then SetFit) within a time budget,
    and keep the start model unless a candidate's dev gain is clearly above 0 (a paired bootstrap interval); of those,
    the best on dev, or a cheaper-to-run one that is not significantly worse. Dev and test texts are kept out of
    training. Rerun the same command to resume after an interruption. With --engine ray the trained candidates run
    side by side on a Ray cluster (docs/scale.md)."""
    started = time.monotonic()  # the budget counts the libraries' loading too
    from sentforge.adaptation import adapt as run_adapt

    names = None if candidates is None else [n.strip() for n in candidates.split(",") if n.strip()]
    report = run_adapt(model, unlabelled, dev, output, labelled=labelled, test=test, cross_encoder=cross_encoder,
                       budget_minutes=budget_minutes,
                       members=member, seed=seed, eval_every=eval_every, candidates=names, max_epochs=max_epochs,
                       meta_members=meta_members, device=device, select_rule=select,
                       keep_dev_texts=keep_dev_texts, race=race, keep_checkpoints=keep_checkpoints,
                       min_texts_per_second=min_texts_per_second, keep=keep, started=started, engine=engine,
                       address=address, cpus_per_run=cpus_per_run, gpus_per_run=gpus_per_run)
    chosen = report.candidates[report.selected]
    typer.echo(f"selected {report.selected}: dev {report.metric} {chosen.dev:.2f}; wrote {output}/model, "
               f"{output}/report.md, {output}/report.json")
