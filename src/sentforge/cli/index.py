"""`sentforge index build`: a persisted FAISS index of a corpus, searched by `sentforge search --index`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from sentforge.cli.app import DEFAULT_MODEL, ModelOpt, OverwriteOpt, SeedOpt, app

index_app = typer.Typer(no_args_is_help=True, help="Build nearest-neighbour indexes of encoded corpora.")
app.add_typer(index_app, name="index")


@index_app.command("build")
def build(
    input: Annotated[Path, typer.Argument(help="Texts (.txt/.jsonl/.csv/.tsv) to encode, or a shard directory "
                                          "written by `sentforge encode`.")],
    output: Annotated[Path, typer.Option("--output", "-o", help="Index directory to write.")],
    model: ModelOpt = DEFAULT_MODEL,
    texts: Annotated[Optional[Path], typer.Option(help="For a shard directory: the texts it was encoded from.")]
    = None,
    kind: Annotated[str, typer.Option(help="flat (exact), ivfpq or hnsw.")] = "hnsw",
    nlist: Annotated[int, typer.Option(help="IVF-PQ: k-means cells.")] = 1024,
    pq_m: Annotated[int, typer.Option(help="IVF-PQ: codes per vector (divides the dimension).")] = 16,
    pq_bits: Annotated[int, typer.Option(help="IVF-PQ: bits per code.")] = 8,
    nprobe: Annotated[int, typer.Option(help="IVF-PQ: cells visited per query.")] = 16,
    hnsw_m: Annotated[int, typer.Option(help="HNSW: links per node.")] = 32,
    ef_construction: Annotated[int, typer.Option(help="HNSW: candidates while building.")] = 200,
    ef_search: Annotated[int, typer.Option(help="HNSW: candidates per query.")] = 128,
    field: Annotated[Optional[str], typer.Option(help="JSONL field holding the text.")] = None,
    column: Annotated[Optional[str], typer.Option(help="CSV/TSV column holding the text.")] = None,
    batch_size: Annotated[int, typer.Option(min=1)] = 32,
    chunk_size: Annotated[int, typer.Option(min=1, help="Texts encoded at a time.")] = 10_000,
    overwrite: OverwriteOpt = False,
    seed: SeedOpt = 0,
) -> None:
    """Encode (or read) a corpus and write a searchable index with its texts and model identity."""
    from sentforge.scale.index import IndexParams, index_file

    params = IndexParams(kind, nlist, pq_m, pq_bits, nprobe, hnsw_m, ef_construction, ef_search)
    index_file(model, input, output, texts, params, field=field, column=column, batch_size=batch_size,
               chunk_size=chunk_size, overwrite=overwrite, seed=seed)
