"""`sentforge meta fit` and `sentforge meta ablate`: sentence meta-embeddings from several encoders."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from sentforge.cli.app import DeviceOpt, OverwriteOpt, SeedOpt, app
from sentforge.errors import ConfigError

logger = logging.getLogger("sentforge.cli")

meta_app = typer.Typer(no_args_is_help=True, help="Combine encoders into a meta-embedding (Poerner et al., 2020).")
app.add_typer(meta_app, name="meta")

DEFAULT_CACHE = Path.home() / ".cache" / "sentforge" / "meta-embeddings"

MemberOpt = Annotated[list[str], typer.Option("--member", help="A member encoder spec; repeat for each member.")]
MethodOpt = Annotated[str, typer.Option(help="concat, average, svd, gcca, autoencoder or upprojection.")]
CorpusOpt = Annotated[list[Path], typer.Option(
    "--corpus", help="Unlabelled fit sentences: .txt (one per line), .jsonl, an NLTK .zip or a directory of them; "
                     "repeatable.")]
DimOpt = Annotated[int, typer.Option(min=1, help="Meta-embedding size d (svd, gcca, autoencoder, upprojection).")]
TauOpt = Annotated[float, typer.Option(help="GCCA regularisation tau.")]
AELossOpt = Annotated[str, typer.Option(help="Auto-encoder loss: mse, mae, kl or cos2.")]
AEHiddenOpt = Annotated[int, typer.Option(min=0, max=2, help="Auto-encoder hidden layers (0-2).")]
AEEpochsOpt = Annotated[int, typer.Option(min=1, help="Auto-encoder epochs (paper: 500).")]
AEBatchOpt = Annotated[int, typer.Option(min=1, help="Auto-encoder batch size (paper: 10000).")]
FieldOpt = Annotated[Optional[str], typer.Option(help="JSONL field holding the text (default: text).")]
CacheOpt = Annotated[Optional[Path], typer.Option(help="Where member embeddings of the corpus are cached "
                                                       f"(default: {DEFAULT_CACHE}).")]
NoCacheOpt = Annotated[bool, typer.Option(help="Do not cache member embeddings on disk.")]
BatchOpt = Annotated[int, typer.Option(min=1, help="Member encoding batch size.")]


def method_params(method: str, dim: int, tau: float, ae_loss: str, ae_hidden: int, ae_epochs: int,
                  ae_batch_size: int, seed: int, device: str | None) -> dict[str, Any]:
    """The CLI options that apply to `method`, as constructor arguments."""
    from sentforge.meta import method_class

    method_class(method)  # unknown names fail here, with the list of valid ones
    if method in ("svd", "upprojection"):
        return {"dim": dim} | ({"seed": seed} if method == "upprojection" else {})
    if method == "gcca":
        return {"dim": dim, "tau": tau}
    if method == "autoencoder":
        return {"dim": dim, "loss": ae_loss, "hidden_layers": ae_hidden, "epochs": ae_epochs,
                "batch_size": ae_batch_size, "seed": seed, "device": device or "cpu"}
    return {}


def read_fit_corpus(paths: list[Path], field: str | None) -> list[str]:
    from sentforge.data.corpora import read_corpus

    if not paths:
        raise ConfigError("--corpus: give at least one file of unlabelled sentences")
    sentences = [s for path in paths for s in read_corpus(path, field, split=False)]
    if len(sentences) < 2:
        raise ConfigError(f"--corpus {', '.join(map(str, paths))}: {len(sentences)} sentences; fitting needs at least 2")
    return sentences


def load_members(specs: list[str], device: str | None) -> list[Any]:
    from sentforge.cli.app import load_model

    if not specs:
        raise ConfigError("--member: give at least one member encoder")
    return [load_model(spec, device) for spec in specs]


@meta_app.command("fit")
def fit(
    output: Annotated[Path, typer.Option("--output", "-o", help="Directory for the fitted MetaEncoder.")],
    member: MemberOpt = [],  # noqa: B006 (typer reads the default)
    corpus: CorpusOpt = [],  # noqa: B006
    method: MethodOpt = "gcca",
    dim: DimOpt = 1024,
    tau: TauOpt = 0.1,
    ae_loss: AELossOpt = "mse",
    ae_hidden: AEHiddenOpt = 0,
    ae_epochs: AEEpochsOpt = 500,
    ae_batch_size: AEBatchOpt = 10_000,
    embed_members: Annotated[bool, typer.Option(help="Save member encoders inside the output directory "
                                                "instead of by reference (their spec).")] = False,
    field: FieldOpt = None,
    cache_dir: CacheOpt = None,
    no_cache: NoCacheOpt = False,
    batch_size: BatchOpt = 32,
    device: DeviceOpt = None,
    overwrite: OverwriteOpt = False,
    seed: SeedOpt = 0,
) -> None:
    """Fit a meta-embedding of the members on an unlabelled corpus and save it as a MetaEncoder."""
    from sentforge.io import check_output_dir
    from sentforge.meta import MetaEncoder
    from sentforge.seed import set_seed

    set_seed(seed)
    params = method_params(method, dim, tau, ae_loss, ae_hidden, ae_epochs, ae_batch_size, seed, device)
    check_output_dir(output, overwrite)
    sentences = read_fit_corpus(corpus, field)
    members = load_members(member, device)
    logger.info("fitting %s on %d sentences with %d members", method, len(sentences), len(members))
    meta = MetaEncoder(members, method, **params)
    meta.fit(sentences, batch_size=batch_size, cache_dir=None if no_cache else (cache_dir or DEFAULT_CACHE))
    meta.save(output, overwrite=overwrite, embed_members=embed_members)
    typer.echo(f"wrote {output}: {meta.name}, dimension {meta.dim}, fitted on {len(sentences)} sentences")


@meta_app.command("ablate")
def ablate(
    output: Annotated[Path, typer.Option("--output", "-o", help="Results JSON; a Markdown table is written "
                                         "beside it with the suffix .md.")],
    member: MemberOpt = [],  # noqa: B006
    corpus: CorpusOpt = [],  # noqa: B006
    method: MethodOpt = "gcca",
    dim: DimOpt = 1024,
    tau: TauOpt = 0.1,
    ae_loss: AELossOpt = "mse",
    ae_hidden: AEHiddenOpt = 0,
    ae_epochs: AEEpochsOpt = 500,
    ae_batch_size: AEBatchOpt = 10_000,
    tasks: Annotated[str, typer.Option(help="Task families and/or names to score each ensemble on.")] = "sts",
    data_dir: Annotated[Optional[Path], typer.Option(
        envvar="SENTFORGE_DATA", show_envvar=True, help="Data root holding senteval/, glue/, …")] = None,
    field: FieldOpt = None,
    cache_dir: CacheOpt = None,
    no_cache: NoCacheOpt = False,
    batch_size: BatchOpt = 32,
    device: DeviceOpt = None,
    overwrite: OverwriteOpt = False,
    seed: SeedOpt = 0,
) -> None:
    """Leave-one-member-out: fit the method on all members and on every set without one member, score each
    on the tasks, and print/write the table. Each member encodes the corpus and the task texts once."""
    from sentforge.evaluation.runner import markdown_path
    from sentforge.io import atomic_file, check_output_file, save_json
    from sentforge.meta.ablation import ablation_markdown, leave_one_member_out
    from sentforge.seed import set_seed

    set_seed(seed)
    params = method_params(method, dim, tau, ae_loss, ae_hidden, ae_epochs, ae_batch_size, seed, device)
    if output.suffix != ".json":
        raise ConfigError(f"--output {output}: the table is written as JSON (+ Markdown beside it); end it in .json")
    check_output_file(output, overwrite)
    check_output_file(markdown_path(output), overwrite)
    if len(member) < 2:
        raise ConfigError("--member: leaving one member out needs at least 2 members")
    sentences = read_fit_corpus(corpus, field)
    members = load_members(member, device)
    report = leave_one_member_out(members, method, params, sentences, tasks, data_dir=data_dir,
                                  batch_size=batch_size,
                                  cache_dir=None if no_cache else (cache_dir or DEFAULT_CACHE), seed=seed)
    save_json(output, report)
    table = ablation_markdown(report)
    with atomic_file(markdown_path(output), "w") as handle:
        handle.write(table)
    typer.echo(table)
    typer.echo(f"wrote {output} and {markdown_path(output)}")
