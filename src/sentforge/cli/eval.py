"""`sentforge eval`: run task families or single tasks on one model, write JSON and a Markdown table."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from sentforge.cli.app import DEFAULT_MODEL, DeviceOpt, ModelOpt, OverwriteOpt, app, seed_option


@app.command("eval")
def eval_command(
    output: Annotated[Path, typer.Option("--output", "-o", help="Results JSON; a Markdown table is written beside "
                                         "it with the suffix .md.")],
    model: ModelOpt = DEFAULT_MODEL,
    tasks: Annotated[str | None, typer.Option(help="Comma-separated task families (sts, transfer, sentglue, useb, "
                                              "geometry) and/or task names, e.g. sts,STSBenchmark-raw "
                                              "(default: sts, or none when --dataset is given).")] = None,
    dataset: Annotated[list[str] | None, typer.Option(
        help="Your own data, repeatable: a .tsv/.csv/.jsonl file or a BEIR folder, the kind (scored-pairs, "
             "labelled-pairs, reranking, retrieval, classes) detected from the columns, or given as KIND:PATH; "
             "classes (text, label) are scored by a head fitted on the train.jsonl/.csv/.tsv beside the file.")] = None,
    dev: Annotated[Path | None, typer.Option(help="Labelled-pairs dev file whose best accuracy and F1 "
                                             "thresholds the labelled-pairs datasets use (default: each "
                                             "dataset's own best threshold).")] = None,
    data_dir: Annotated[Path | None, typer.Option(
        envvar="SENTFORGE_DATA", show_envvar=True,
        help="Data root holding senteval/, glue/, cqa-qatarliving/, … (default: $SENTFORGE_DATA).")] = None,
    batch_size: Annotated[int, typer.Option(min=1, help="Encoding batch size.")] = 64,
    strict: Annotated[bool, typer.Option(help="Fail when a selected task's files are missing "
                                         "(default: skip it with a warning).")] = False,
    device: DeviceOpt = None,
    overwrite: OverwriteOpt = False,
    seed: seed_option("Random seed (1111 is SentEval's).") = 1111,
    add_to_card: Annotated[bool, typer.Option(help="Also add the results to the model card (README.md) of the "
                                              "model directory given as --model.")] = False,
    reranker: Annotated[Path | None, typer.Option(help="A cross-encoder directory that re-ranks --model's top "
                                                       "--rerank-top candidates of every ranking task and scores "
                                                       "labelled pairs itself.")] = None,
    rerank_top: Annotated[int, typer.Option(min=1, help="Candidates of each query the --reranker "
                                                        "re-ranks.")] = 10,
    rerank_weight: Annotated[float, typer.Option(min=0.0, max=1.0, help="The --reranker score's weight against "
                                                 "--model's cosine (1: its score alone; an adapt pipeline's is in "
                                                 "its reranker/pipeline.json).")] = 1.0,
) -> None:
    """Evaluate a model (spec, directory, or bm25) on the selected tasks and on your own datasets; each
    text is encoded once."""
    from sentforge.evaluation.runner import evaluate_datasets, markdown_path

    report = evaluate_datasets(model, output, tasks, dataset or [], dev=dev, data_dir=data_dir, batch_size=batch_size,
                               strict=strict, device=device, overwrite=overwrite, seed=seed, add_to_card=add_to_card,
                               reranker=reranker, rerank_top=rerank_top, rerank_weight=rerank_weight)
    width = max([24, *map(len, report["tasks"]), *map(len, report["skipped"])])  # dataset paths can be long
    for name, entry in report["tasks"].items():
        typer.echo(f"{name:{width}s} {entry['main_metric']:>16s} {entry['main_score']:8.2f}")
    for name, why in report["skipped"].items():
        typer.echo(f"{name:{width}s} skipped: {why}")
    typer.echo(f"wrote {output} and {markdown_path(output)} ({report['timing']['total_seconds']:.1f} s)")
    if "reranker" in report:
        timing = report["timing"]
        typer.echo(f"re-ranked by {report['reranker']['model']}: {timing['reranked_pairs']} pairs, "
                   f"{timing['rerank_pairs_per_second'] or 0:.1f} pairs/s")
    if add_to_card:
        typer.echo(f"added the results to the model card {Path(model) / 'README.md'}")
