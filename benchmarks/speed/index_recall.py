"""Recall@10 of IVF-PQ and HNSW against exact search, build time and query latency, on encoded shards.

    python benchmarks/speed/index_recall.py VECTORS_DIR --texts LINES.txt --base 1000000 --queries 1000

VECTORS_DIR is a shard directory from `sentforge encode` (its first --base rows are indexed, the next
--queries rows are the queries). Builds each index with `sentforge.scale.index.build_index` (default
parameters unless given), then times single-query searches (p50/p99 over the queries, one thread).
"""

from __future__ import annotations

import argparse
import itertools
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import numpy as np


def text_query_ms(index, model: str) -> str:
    """Latency of `VectorIndex.search` for one text query (encode + search + text lookup), after loading."""
    import sentforge

    encoder = sentforge.load(model)
    times = []
    for text in ("how do i reset my password", "the president spoke to congress", "a film about a pig") * 10:
        start = time.perf_counter()
        index.search(encoder, [text], k=10)
        times.append(time.perf_counter() - start)
    return f"p50 {1e3 * np.median(times):.1f} ms, max {1e3 * max(times):.1f} ms over {len(times)} queries"


def exact_top10(base: np.ndarray, queries: np.ndarray) -> np.ndarray:
    """Brute-force cosine top-10 ids (numpy, in blocks of base rows): the reference for recall."""
    def unit(x):
        x = np.asarray(x, dtype=np.float32)
        return x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-12)

    q = unit(queries)
    best_scores, best_ids = np.full((len(q), 0), -np.inf, np.float32), np.zeros((len(q), 0), np.int64)
    for start in range(0, len(base), 100_000):
        scores = q @ unit(base[start:start + 100_000]).T
        ids = np.broadcast_to(np.arange(start, start + scores.shape[1]), scores.shape)
        scores, ids = np.hstack([best_scores, scores]), np.hstack([best_ids, ids])
        keep = np.argsort(-scores, axis=1, kind="stable")[:, :10]
        best_scores, best_ids = np.take_along_axis(scores, keep, 1), np.take_along_axis(ids, keep, 1)
    return best_ids


def main() -> None:
    import faiss

    from sentforge.data.texts import iter_texts
    from sentforge.scale.index import IndexParams, VectorIndex, build_index
    from sentforge.support.identity import ModelIdentity
    from sentforge.scale.streaming import load_vectors, read_manifest

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("vectors", type=Path)
    parser.add_argument("--texts", type=Path, help="The encoded text file (else ids stand in for texts).")
    parser.add_argument("--base", type=int, default=1_000_000)
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument("--pq-m", type=int, default=10)
    parser.add_argument("--nlist", type=int, default=1024)
    parser.add_argument("--nprobe", type=int, default=32)
    parser.add_argument("--hnsw-m", type=int, default=32)
    parser.add_argument("--ef-search", type=int, default=128)
    parser.add_argument("--kinds", default="flat,ivfpq,hnsw")
    args = parser.parse_args()
    faiss.omp_set_num_threads(1)
    vectors = load_vectors(args.vectors)
    base, queries = vectors[: args.base], np.asarray(vectors[args.base: args.base + args.queries])
    identity = ModelIdentity.from_dict(read_manifest(args.vectors)["job"]["model"])
    print(f"{len(base)} vectors of dimension {base.shape[1]} ({identity.name}), {len(queries)} queries, 1 thread")
    common = IndexParams(nlist=args.nlist, pq_m=args.pq_m, nprobe=args.nprobe, hnsw_m=args.hnsw_m,
                         ef_search=args.ef_search)
    exact = exact_top10(base, queries)
    with tempfile.TemporaryDirectory() as tmp:
        for kind in args.kinds.split(","):
            params = replace(common, kind=kind)
            start = time.perf_counter()
            blocks = (base[i:i + 100_000] for i in range(0, len(base), 100_000))
            texts = itertools.islice(iter_texts(args.texts), len(base)) if args.texts else map(str, range(len(base)))
            build_index(blocks, texts, Path(tmp) / kind, identity, params)
            build = time.perf_counter() - start
            index = VectorIndex.load(Path(tmp) / kind)
            latencies, found = [], []
            for query in queries:
                start = time.perf_counter()
                _, ids = index.search_vectors(query[None], k=10)
                latencies.append(time.perf_counter() - start)
                found.append(ids[0])
            found = np.array(found)
            recall = np.mean([len(set(a) & set(b)) / 10 for a, b in zip(found, exact)])
            size = (Path(tmp) / kind / "index.faiss").stat().st_size / 2**20
            print(f"{kind}: {params if kind != 'flat' else 'exact'}\n  recall@10 {recall:.4f}, build {build:.1f} s, "
                  f"query p50 {1e3 * np.percentile(latencies, 50):.2f} ms, "
                  f"p99 {1e3 * np.percentile(latencies, 99):.2f} ms, "
                  f"index file {size:.0f} MiB")
            if kind == "hnsw":
                print(f"  text queries through {identity.name}: {text_query_ms(index, identity.name)}")


if __name__ == "__main__":
    main()
