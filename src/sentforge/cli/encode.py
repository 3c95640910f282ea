"""`sentforge encode`, `info` and `search`: texts to vectors, and a look at a model."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Annotated, Optional

import typer

from sentforge.cli.app import DEFAULT_MODEL, DeviceOpt, ModelOpt, OverwriteOpt, SeedOpt, app

logger = logging.getLogger("sentforge.cli")


@app.command()
def encode(
    input: Annotated[Path, typer.Argument(help="Texts: .txt (one per line), .jsonl or .csv/.tsv.")],
    output: Annotated[Path, typer.Option("--output", "-o", help="A .npy file, or a directory of shards plus "
                                         "manifest.json.")],
    model: ModelOpt = DEFAULT_MODEL,
    field: Annotated[Optional[str], typer.Option(help="JSONL field holding the text (default: text).")] = None,
    column: Annotated[Optional[str], typer.Option(help="CSV/TSV column holding the text (default: text).")] = None,
    batch_size: Annotated[int, typer.Option(min=1)] = 32,
    chunk_size: Annotated[int, typer.Option(min=1, help="Texts read, encoded and written at a time; memory "
                                            "is bounded by it, and a rerun resumes after the last whole chunk.")]
    = 10_000,
    precision: Annotated[str, typer.Option(help="float32, float16, int8, uint8, binary or ubinary.")] = "float32",
    engine: Annotated[str, typer.Option(help="local (this process) or ray (a Ray cluster).")] = "local",
    workers: Annotated[int, typer.Option(min=1, help="Model actors for --engine ray.")] = 1,
    normalize: Annotated[bool, typer.Option(help="L2-normalise the vectors.")] = False,
    max_seq_length: Annotated[Optional[int], typer.Option(min=1, help="Truncate texts to this many tokens.")] = None,
    device: DeviceOpt = None,
    dtype: Annotated[Optional[str], typer.Option(help="Compute precision of the model: float32 (default), "
                                                 "bfloat16, or float16 (GPU only). The output format is --precision.")]
    = None,
    overwrite: OverwriteOpt = False,
    seed: SeedOpt = 0,
) -> None:
    """Encode a file of texts into vectors (one row per text, in file order), chunk by chunk.

    Killed and run again with the same arguments, it continues from the last complete chunk.
    """
    from sentforge.scale.streaming import encode_file

    logger.info("encoding %s with %s", input, model)
    encode_file(model, input, output, chunk_size=chunk_size, batch_size=batch_size, normalize=normalize,
                max_seq_length=max_seq_length, precision=precision, field=field, column=column,
                overwrite=overwrite, engine=engine, workers=workers, device=device, dtype=dtype, seed=seed)


@app.command()
def info(model: Annotated[str, typer.Argument(help="Model spec.")] = DEFAULT_MODEL, seed: SeedOpt = 0) -> None:
    """Show an encoder's modules, embedding size and maximum sequence length."""
    from sentforge.loading import model_info

    details = model_info(model)
    typer.echo(f"model: {model}")
    typer.echo(f"dimension: {details['dimension']}")
    if "modules" in details:
        typer.echo(f"max_seq_length: {details['max_seq_length']}")
        typer.echo(f"parameters: {details['parameters']:,}")
        for idx, (name, config) in enumerate(details["modules"]):
            typer.echo(f"module {idx}: {name} {config}")
    else:
        typer.echo(f"type: {details['type']}")


@app.command()
def search(
    query: Annotated[list[str], typer.Argument(help="One or more query texts.")],
    corpus: Annotated[Optional[Path], typer.Option(help="Texts to search (encoded on each call): .txt, .jsonl "
                                                   "or .csv/.tsv.")] = None,
    index: Annotated[Optional[Path], typer.Option(help="An index directory from `sentforge index build` "
                                                  "(nothing is re-encoded but the queries).")] = None,
    model: Annotated[Optional[str], typer.Option("--model", "-m", help="Model spec (default: the index's model, "
                                                 f"else {DEFAULT_MODEL}).")] = None,
    top_k: Annotated[int, typer.Option("--top-k", "-k", min=1)] = 5,
    field: Annotated[Optional[str], typer.Option(help="JSONL field holding the text.")] = None,
    column: Annotated[Optional[str], typer.Option(help="CSV/TSV column holding the text.")] = None,
    batch_size: Annotated[int, typer.Option(min=1)] = 32,
    reranker: Annotated[Optional[Path], typer.Option(help="A cross-encoder directory that re-ranks the "
                                                          "--rerank-top nearest texts (its scores are shown).")] = None,
    rerank_top: Annotated[int, typer.Option(min=1, help="Nearest texts the --reranker re-ranks.")] = 10,
    device: DeviceOpt = None,
    seed: SeedOpt = 0,
) -> None:
    """Print the corpus texts nearest to each query by cosine similarity (or re-ranked by a cross-encoder)."""
    from sentforge.scale.index import search_texts

    hits = search_texts(query, corpus=corpus, index=index, model=model or (None if index else DEFAULT_MODEL),
                        top_k=top_k, field=field, column=column, batch_size=batch_size, device=device, seed=seed,
                        reranker=reranker, rerank_top=rerank_top)
    for text, found in zip(query, hits):
        typer.echo(f"query: {text}")
        for rank, hit in enumerate(found, 1):
            typer.echo(f"  {rank}. {hit.score:.4f}  {hit.text}")
