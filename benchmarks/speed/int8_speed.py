"""int8 (ONNX Runtime, `sentforge export --format int8`) against fp32 sentforge and sentence-transformers on
the raw STS-B test set: sentences/s over alternating rounds, STS-B test Spearman, and GFLOP/s vs CPU peak.

    python benchmarks/speed/int8_speed.py [--rounds 3] [--batch-size 32] [--threads 1] [--ghz 2.596]
        [--st-onnx-int8 avx512_vnni avx2]

sentence-transformers' own ONNX int8 (`export_dynamic_quantized_onnx_model` with each configuration named
by --st-onnx-int8) joins the contestants when `sentence-transformers[onnx]` (optimum) is importable; it
needs transformers 4.x, so it usually runs from a separate environment holding sentforge too. Its
ONNX Runtime session gets the same thread settings as sentforge's.

Every engine encodes the same 2,758 sentences with the same batch size in each round, in turn; the
ratios come from the per-round medians of that one alternating run. Speed is reported per wall-clock
second and per CPU second of this process (`time.process_time`): on a machine shared with other jobs
the wall clock measures the neighbours, the CPU time measures the engine (with one thread there is no
spin-waiting to inflate it). FLOPs are counted on the padded,
length-sorted batches sentforge runs (matrix products of the Transformer layers, 2 FLOPs per
multiply-add); the peak assumes 2 cores of AMD Zen 4 (two 256-bit FMA pipes: 32 fp32 FLOP/cycle/core;
VNNI: 128 int8 ops/cycle/core) at --ghz.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from functools import partial
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/, for benchlib
from benchlib.data import reference_models, spearman, stsb_test

os.environ.setdefault("HF_HUB_OFFLINE", "1")


def model_gflop(encoder, texts: list[str], batch_size: int) -> float:
    """Multiply-add FLOPs of the Transformer layers over sentforge's padded, length-sorted batches."""
    config = encoder[0].model.config
    h, ffn, layers = config.hidden_size, config.intermediate_size, config.num_hidden_layers
    ids, _ = encoder[0].token_ids(texts)
    lengths = sorted((len(x) for x in ids), reverse=True)
    total = 0
    for start in range(0, len(lengths), batch_size):
        b, s = len(lengths[start:start + batch_size]), lengths[start]
        total += layers * (2 * b * s * (4 * h * h + 2 * h * ffn) + 2 * 2 * b * s * s * h)
    return total / 1e9


def st_onnx_int8_engines(path: str, configs: list[str], workdir: Path, threads: int) -> dict:
    """sentence-transformers ONNX int8 models, one per quantization config; empty when optimum is missing."""
    try:
        import onnxruntime
        from sentence_transformers import SentenceTransformer, export_dynamic_quantized_onnx_model
        from optimum.onnxruntime import ORTModel  # noqa: F401  (the export's real dependency)
    except ImportError as err:
        print(f"  sentence-transformers ONNX int8 skipped: {err}")
        return {}
    # The ONNX export writes next to the model, so work on a copy.
    local = str(shutil.copytree(path, workdir / "st-onnx"))
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads, options.inter_op_num_threads = threads, 1
    exported = SentenceTransformer(local, device="cpu", backend="onnx")
    models = {}
    for config in configs:
        export_dynamic_quantized_onnx_model(exported, config, local)
        # The file is named after the weight type the config picks (qint8 for avx512_vnni, quint8 for avx2).
        (graph,) = Path(local, "onnx").glob(f"model_*int8_{config}.onnx")
        models[f"sentence-transformers ONNX int8 {config}"] = SentenceTransformer(
            local, device="cpu", backend="onnx",
            model_kwargs={"file_name": f"onnx/{graph.name}", "session_options": options})
    return models


def main() -> None:
    import torch
    from sentence_transformers import SentenceTransformer

    import sentforge
    from sentforge.scale.export import export_encoder

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--ghz", type=float, default=2.596)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--st-onnx-int8", nargs="*", default=["avx512_vnni", "avx2"],
                        choices=["arm64", "avx2", "avx512", "avx512_vnni"],
                        help="sentence-transformers ONNX int8 configurations to compare (none: skip)")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    cores = args.threads
    peak_fp32, peak_int8 = cores * args.ghz * 32, cores * args.ghz * 128
    first, second, gold = stsb_test()
    texts = first + second
    models = reference_models()
    print(f"{len(texts)} sentences, batch {args.batch_size}, threads {cores}; peak {peak_fp32:.0f} GFLOP/s "
          f"fp32, {peak_int8:.0f} GOP/s int8 at {args.ghz} GHz")
    for name, path in models.items():
        fp32 = sentforge.load(path)
        with tempfile.TemporaryDirectory() as tmp:
            int8 = sentforge.load(export_encoder(fp32, Path(tmp) / "int8", "int8", source=name))
            st_onnx = st_onnx_int8_engines(path, args.st_onnx_int8, Path(tmp), cores)
        st = SentenceTransformer(path, device="cpu")
        engines = {
            "sentforge int8": partial(int8.encode, texts, batch_size=args.batch_size),
            "sentforge fp32": partial(fp32.encode, texts, batch_size=args.batch_size),
            "sentence-transformers torch": partial(st.encode, texts, batch_size=args.batch_size),
        }
        for label, model in st_onnx.items():
            engines[label] = lambda model=model: model.encode(texts, batch_size=args.batch_size)
        gflop = model_gflop(fp32, texts, args.batch_size)
        print(f"\n{name}: {gflop:.0f} GFLOP per pass")
        for label, run in engines.items():
            print(f"  {label}: STS-B test Spearman x100 {spearman(np.asarray(run()), len(first), gold):.2f}")
        wall, cpu = {label: [] for label in engines}, {label: [] for label in engines}
        for _ in range(args.rounds):
            for label, run in engines.items():
                start, start_cpu = time.perf_counter(), time.process_time()
                run()
                wall[label].append(len(texts) / (time.perf_counter() - start))
                cpu[label].append(len(texts) / (time.process_time() - start_cpu))
        base = statistics.median(cpu["sentforge fp32"])
        for label in engines:
            med = statistics.median(cpu[label])
            peak = peak_int8 if "int8" in label else peak_fp32
            rounds = ", ".join(f"{v:.0f}" for v in cpu[label])
            print(f"  {label}: {med:.0f} sentences per CPU second (rounds: {rounds}),"
                  f" x{med / base:.2f} of sentforge fp32; wall clock {statistics.median(wall[label]):.0f} sentences/s; "
                  f"{gflop * med / len(texts):.0f} GFLOP/s per CPU second = "
                  f"{100 * gflop * med / len(texts) / peak:.0f}%"
                  f" of the {'int8' if 'int8' in label else 'fp32'} peak of {cores} core(s)")


if __name__ == "__main__":
    main()
