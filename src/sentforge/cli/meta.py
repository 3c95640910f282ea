"""`sentforge meta fit` and `sentforge meta ablate`: sentence meta-embeddings from several encoders."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from sentforge.cli.app import DeviceOpt, OverwriteOpt, SeedOpt, app

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


@dataclass(frozen=True)
class FitOptions:
    """The options `meta fit` and `meta ablate` share: the method and its settings, and how members encode."""

    method: MethodOpt = "gcca"
    dim: DimOpt = 1024
    tau: TauOpt = 0.1
    ae_loss: AELossOpt = "mse"
    ae_hidden: AEHiddenOpt = 0
    ae_epochs: AEEpochsOpt = 500
    ae_batch_size: AEBatchOpt = 10_000
    field: FieldOpt = None
    cache_dir: CacheOpt = None
    no_cache: NoCacheOpt = False
    batch_size: BatchOpt = 32
    device: DeviceOpt = None
    overwrite: OverwriteOpt = False
    seed: SeedOpt = 0

    def method_params(self) -> dict[str, Any]:
        """The options that apply to the method, as its constructor arguments."""
        from sentforge.meta import method_class

        method_class(self.method)  # unknown names fail here, with the list of valid ones
        if self.method in ("svd", "upprojection"):
            return {"dim": self.dim} | ({"seed": self.seed} if self.method == "upprojection" else {})
        if self.method == "gcca":
            return {"dim": self.dim, "tau": self.tau}
        if self.method == "autoencoder":
            return {"dim": self.dim, "loss": self.ae_loss, "hidden_layers": self.ae_hidden, "epochs": self.ae_epochs,
                    "batch_size": self.ae_batch_size, "seed": self.seed, "device": self.device or "cpu"}
        return {}

    @property
    def cache(self) -> Path | None:
        """Where member embeddings of the corpus are cached; None with --no-cache."""
        return None if self.no_cache else (self.cache_dir or DEFAULT_CACHE)


def with_fit_options(command: Callable[..., None]) -> Callable[..., None]:
    """Give `command` the FitOptions fields as CLI options, in place of its `options` parameter, and pass
    them to it as one `options: FitOptions` (typer reads a command's options from its signature)."""
    shared = [p.replace(kind=inspect.Parameter.KEYWORD_ONLY)
              for p in inspect.signature(FitOptions, eval_str=True).parameters.values()]
    params = []
    for param in inspect.signature(command, eval_str=True).parameters.values():
        params += shared if param.name == "options" else [param.replace(kind=inspect.Parameter.KEYWORD_ONLY)]

    @functools.wraps(command)
    def run(**values: Any) -> None:
        options = FitOptions(**{p.name: values.pop(p.name) for p in shared})
        command(**values, options=options)

    run.__signature__ = inspect.Signature(params)
    return run


@meta_app.command("fit")
@with_fit_options
def fit(
    output: Annotated[Path, typer.Option("--output", "-o", help="Directory for the fitted MetaEncoder.")],
    member: MemberOpt = [],  # noqa: B006 (typer reads the default)
    corpus: CorpusOpt = [],  # noqa: B006
    embed_members: Annotated[bool, typer.Option(help="Save member encoders inside the output directory "
                                                "instead of by reference (their spec).")] = False,
    *,
    options: FitOptions,
) -> None:
    """Fit a meta-embedding of the members on an unlabelled corpus and save it as a MetaEncoder."""
    from sentforge.meta_fit import fit_meta_encoder

    fitted = fit_meta_encoder(member, options.method, corpus, output, params=options.method_params(),
                              field=options.field, batch_size=options.batch_size, cache_dir=options.cache,
                              device=options.device, embed_members=embed_members, overwrite=options.overwrite,
                              seed=options.seed)
    meta = fitted.encoder
    typer.echo(f"wrote {output}: {meta.name}, dimension {meta.dim}, fitted on {fitted.sentences} sentences")


@meta_app.command("ablate")
@with_fit_options
def ablate(
    output: Annotated[Path, typer.Option("--output", "-o", help="Results JSON; a Markdown table is written "
                                         "beside it with the suffix .md.")],
    member: MemberOpt = [],  # noqa: B006
    corpus: CorpusOpt = [],  # noqa: B006
    tasks: Annotated[str, typer.Option(help="Task families and/or names to score each ensemble on.")] = "sts",
    data_dir: Annotated[Optional[Path], typer.Option(
        envvar="SENTFORGE_DATA", show_envvar=True, help="Data root holding senteval/, glue/, …")] = None,
    *,
    options: FitOptions,
) -> None:
    """Leave-one-member-out: fit the method on all members and on every set without one member, score each
    on the tasks, and print/write the table. Each member encodes the corpus and the task texts once."""
    from sentforge.evaluation.meta_ablation import ablate_meta_encoder, ablation_markdown
    from sentforge.evaluation.runner import markdown_path

    report = ablate_meta_encoder(member, options.method, corpus, output, params=options.method_params(), tasks=tasks,
                                 data_dir=data_dir, field=options.field, batch_size=options.batch_size,
                                 cache_dir=options.cache, device=options.device, overwrite=options.overwrite,
                                 seed=options.seed)
    typer.echo(ablation_markdown(report))
    typer.echo(f"wrote {output} and {markdown_path(output)}")
