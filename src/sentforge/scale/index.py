"""A persisted FAISS index of sentence vectors with their texts and the identity of the model behind them.

Kinds (cosine similarity: vectors are L2-normalised and searched by inner product):

- `flat`: exact search over all vectors.
- `ivfpq`: inverted lists over `nlist` k-means cells, vectors compressed by product quantization into
  `pq_m` codes of `pq_bits` bits; a query visits `nprobe` cells. Small and fast, approximate.
- `hnsw`: a graph with `hnsw_m` links per node, built with `ef_construction` and searched with
  `ef_search` candidates. Fast and accurate, but keeps full vectors plus the graph in memory.

A directory holds `index.faiss`, `texts.jsonl` (one {"id", "text"} per vector) with byte offsets in
`texts.offsets.npy`, and `index.json` (kind, parameters, model identity, SHA-256 of each file). Loading
verifies the checksums; searching with a model other than the one that built the index is refused.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from sentforge.support.errors import ConfigError, InputFileError, ModelFormatError
from sentforge.support.identity import ModelIdentity
from sentforge.support.io import atomic_dir
from sentforge.support.output_guard import guard_output, locked_output
from sentforge.scale.streaming import file_sha256, iter_shards, read_manifest

logger = logging.getLogger(__name__)

INDEX_FILE, TEXTS_FILE, OFFSETS_FILE, META_FILE = "index.faiss", "texts.jsonl", "texts.offsets.npy", "index.json"
INDEX = "index build"  # the command family named in the output marker and the lock
KINDS = ("flat", "ivfpq", "hnsw")
# FAISS wants at least ~39 training points per centroid; more than 256 per centroid adds little.
_TRAIN_PER_CELL = 256


@dataclass(frozen=True)
class IndexParams:
    kind: str = "hnsw"
    nlist: int = 1024
    pq_m: int = 16
    pq_bits: int = 8
    nprobe: int = 16
    hnsw_m: int = 32
    ef_construction: int = 200
    ef_search: int = 128

    def check(self, dim: int | None = None) -> None:
        """Refuse invalid parameters; the ones that depend on the vector dimension only when `dim` is given."""
        if self.kind not in KINDS:
            raise ConfigError(f"kind {self.kind!r} (--kind): choose one of {', '.join(KINDS)}")
        for name, value in asdict(self).items():
            if name != "kind" and value < 1:
                raise ConfigError(f"{name} (--{name.replace('_', '-')}) must be >= 1, got {value}")
        if dim is not None and self.kind == "ivfpq" and dim % self.pq_m:
            raise ConfigError(f"pq_m (--pq-m) {self.pq_m} must divide the vector dimension {dim}")


def _faiss():
    import faiss

    return faiss


def _new_index(params: IndexParams, dim: int):
    faiss = _faiss()
    if params.kind == "flat":
        return faiss.IndexFlatIP(dim)
    if params.kind == "hnsw":
        index = faiss.IndexHNSWFlat(dim, params.hnsw_m, faiss.METRIC_INNER_PRODUCT)
        index.hnsw.efConstruction = params.ef_construction
        return index
    quantizer = faiss.IndexFlatIP(dim)
    # faiss's Python wrapper keeps `quantizer` alive as long as the index.
    return faiss.IndexIVFPQ(quantizer, dim, params.nlist, params.pq_m, params.pq_bits, faiss.METRIC_INNER_PRODUCT)


def _set_search_params(index, params: IndexParams) -> None:
    faiss = _faiss()
    if params.kind == "hnsw":
        index.hnsw.efSearch = params.ef_search
    elif params.kind == "ivfpq":
        faiss.extract_index_ivf(index).nprobe = params.nprobe


def _normalized(vectors: np.ndarray) -> np.ndarray:
    if not np.issubdtype(vectors.dtype, np.floating):
        raise ConfigError(f"an index needs float vectors, got {vectors.dtype}: encode with --precision float32 "
                          "or float16")
    vectors = np.array(vectors, dtype=np.float32, copy=True)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.where(norms == 0, 1, norms)


def build_index(vectors: np.ndarray | Iterable[np.ndarray], texts: Iterable[str], output: str | Path,
                identity: ModelIdentity, params: IndexParams = IndexParams(), overwrite: bool = False,
                seed: int = 0) -> Path:
    """Build and persist an index of `vectors` (an array, or an iterable of row blocks) and their `texts`.

    IVF-PQ trains on the first blocks (up to 256 vectors per cell); all kinds add block by block.
    """
    blocks = [vectors] if isinstance(vectors, np.ndarray) else vectors
    params.check(identity.dim)
    index = _new_index(params, identity.dim)
    pending: list[np.ndarray] = []
    start = time.perf_counter()
    count = 0
    with atomic_dir(output, overwrite, kind=INDEX) as tmp:
        for block in blocks:
            if block.ndim != 2 or block.shape[1] != identity.dim:
                raise ConfigError(f"vectors of shape {block.shape} do not match the model dimension {identity.dim}")
            block = _normalized(block)
            if not index.is_trained:
                pending.append(block)
                if sum(len(b) for b in pending) < params.nlist * _TRAIN_PER_CELL:
                    continue
                block = _train(index, pending, params, seed)
                pending = []
            index.add(block)
            count += len(block)
        if pending:
            block = _train(index, pending, params, seed)
            index.add(block)
            count += len(block)
        n_texts = _write_texts(texts, tmp)
        if n_texts != count:
            raise InputFileError(f"{n_texts} texts for {count} vectors: give the texts the vectors were encoded from")
        _faiss().write_index(index, str(tmp / INDEX_FILE))
        meta = {"format": "sentforge-index", "version": 1, "count": count, "params": asdict(params),
                "model": identity.to_dict(), "build_seconds": round(time.perf_counter() - start, 3),
                "sha256": {name: file_sha256(tmp / name) for name in (INDEX_FILE, TEXTS_FILE, OFFSETS_FILE)}}
        (tmp / META_FILE).write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
    logger.info("built %s index of %d vectors in %.1f s: %s", params.kind, count, meta["build_seconds"], output)
    return Path(output)


def _train(index, pending: list[np.ndarray], params: IndexParams, seed: int) -> np.ndarray:
    data = np.concatenate(pending)
    if params.kind == "ivfpq":
        if len(data) < params.nlist:
            raise ConfigError(f"IVF-PQ with --nlist {params.nlist} needs at least that many vectors; got {len(data)}")
        rng = np.random.default_rng(seed)
        sample = data[rng.permutation(len(data))[: params.nlist * _TRAIN_PER_CELL]]
        index.cp.seed = seed
        index.train(sample)
    return data


def _write_texts(texts: Iterable[str], folder: Path) -> int:
    offsets = []
    with open(folder / TEXTS_FILE, "wb") as handle:
        for i, text in enumerate(texts):
            offsets.append(handle.tell())
            handle.write(json.dumps({"id": i, "text": text}, ensure_ascii=False).encode("utf-8") + b"\n")
    np.save(folder / OFFSETS_FILE, np.asarray(offsets, dtype=np.int64))
    return len(offsets)


@dataclass(frozen=True)
class Hit:
    id: int
    score: float
    text: str


class VectorIndex:
    """A loaded index: search by vectors, or by texts through the model that built it."""

    def __init__(self, path: Path, index: Any, meta: dict[str, Any]) -> None:
        self.path = path
        self.index = index
        self.meta = meta
        # None: an index written before its model's identity was stored; searching it is not checked (warned).
        self.identity = ModelIdentity.from_dict(meta["model"]) if "model" in meta else None
        self.params = IndexParams(**meta["params"])
        self.offsets = np.load(path / OFFSETS_FILE, mmap_mode="r")
        _set_search_params(index, self.params)

    @classmethod
    def load(cls, path: str | Path, verify: bool = True) -> VectorIndex:
        path = Path(path)
        meta_file = path / META_FILE
        if not meta_file.is_file():
            raise InputFileError(f"{path}: not an index directory (no {META_FILE}); build one with "
                                 "`sentforge index build`")
        try:
            meta = json.loads(meta_file.read_text(encoding="utf-8"))
        except json.JSONDecodeError as err:
            raise ModelFormatError(f"{meta_file}: invalid JSON ({err})") from None
        if verify:
            for name, digest in meta["sha256"].items():
                if not (path / name).is_file() or file_sha256(path / name) != digest:
                    raise InputFileError(f"{path / name}: missing or its checksum differs from {META_FILE}; "
                                         "the index is corrupt: build it again")
        return cls(path, _faiss().read_index(str(path / INDEX_FILE)), meta)

    def __len__(self) -> int:
        return int(self.index.ntotal)

    def texts(self, ids: Iterable[int]) -> list[str]:
        out = []
        with open(self.path / TEXTS_FILE, "rb") as handle:
            for i in ids:
                handle.seek(int(self.offsets[i]))
                out.append(json.loads(handle.readline())["text"])
        return out

    def search_vectors(self, queries: np.ndarray, k: int = 10) -> tuple[np.ndarray, np.ndarray]:
        """(scores, ids) of the k nearest vectors of each query, best first (id -1: fewer than k found)."""
        if k < 1:
            raise ConfigError(f"k must be >= 1, got {k}")
        queries = _normalized(np.atleast_2d(queries))
        if queries.shape[1] != self.index.d:
            raise ConfigError(f"queries have dimension {queries.shape[1]}; the index holds {self.index.d}")
        return self.index.search(queries, k)

    def search(self, encoder: Any, queries: Sequence[str], k: int = 10, name: str | None = None) -> list[list[Hit]]:
        """The k nearest texts of each query, embedded with `encoder` (refused unless it built the index)."""
        used = ModelIdentity.of(encoder, name)
        if self.identity is None:
            logger.warning("index %s records no model identity (written by an older sentforge): whether model %r "
                           "built it cannot be checked; build it again to have it checked", self.path, used.name)
        else:
            self.identity.check_same(used, f"index {self.path}")
        scores, ids = self.search_vectors(encoder.encode(list(queries), normalize=True), k)
        results = []
        for row_scores, row_ids in zip(scores, ids):
            found = [(float(s), int(i)) for s, i in zip(row_scores, row_ids) if i >= 0]
            texts = self.texts(i for _, i in found)
            results.append([Hit(i, s, t) for (s, i), t in zip(found, texts)])
        return results


def shard_blocks(folder: str | Path) -> tuple[ModelIdentity, Iterator[np.ndarray]]:
    """The model identity and verified vector blocks of a shard directory written by `sentforge encode`."""
    manifest = read_manifest(folder)
    return ModelIdentity.from_dict(manifest["job"]["model"]), iter_shards(folder)


@locked_output(INDEX)
def index_file(model: Any, input: str | Path, output: str | Path, texts: str | Path | None = None,
               params: IndexParams = IndexParams(), field: str | None = None, column: str | None = None,
               batch_size: int = 32, chunk_size: int = 10_000, overwrite: bool = False, seed: int = 0) -> Path:
    """Index a text file (encoded here, chunk by chunk, with `model`) or a shard directory written by
    `sentforge encode` (whose texts are in the file `texts`). `seed` seeds the random generators
    (`set_seed`) once the options are checked, and the index's training."""
    import shutil
    import tempfile

    from sentforge.data.texts import iter_texts
    from sentforge.scale.streaming import encode_file
    from sentforge.support.seed import check_seed

    input, output = Path(input), Path(output)
    # Every option and the output are checked before the model stack is imported or any text is encoded.
    params.check()
    check_seed(seed, "seed (--seed)")
    guard_output(output, [("input", input), ("texts", texts),
                          ("model", model if isinstance(model, (str, Path)) else None)], INDEX, overwrite)
    from sentforge.loading import load
    from sentforge.support.seed import set_seed

    set_seed(seed)
    if not input.is_dir():
        if texts is not None:
            raise ConfigError("texts (--texts) is for a directory of encoded vectors; a text file indexes its own "
                              "texts")
        encoder = load(model) if isinstance(model, (str, Path)) else model
        params.check(encoder.dim)
        output.parent.mkdir(parents=True, exist_ok=True)
        # A folder of its own, never a fixed name beside the output that could be someone else's.
        scratch = Path(tempfile.mkdtemp(prefix=f".{output.name}.vectors-", dir=output.parent))
        try:
            vectors_dir = scratch / "vectors"
            encode_file(encoder, input, vectors_dir, chunk_size=chunk_size, batch_size=batch_size, normalize=True,
                        field=field, column=column)
            identity, blocks = shard_blocks(vectors_dir)
            return build_index(blocks, iter_texts(input, field, column), output, identity, params, overwrite, seed)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
    if texts is None:
        raise ConfigError(f"{input} holds vectors only: give the texts they were encoded from (texts=, --texts)")
    identity, blocks = shard_blocks(input)
    return build_index(blocks, iter_texts(texts, field, column), output, identity, params, overwrite, seed)


def search_texts(queries: Sequence[str], *, corpus: str | Path | None = None, index: str | Path | None = None,
                 model: str | Path | None = None, top_k: int = 5, field: str | None = None, column: str | None = None,
                 batch_size: int = 32, device: str | None = None, seed: int | None = None,
                 reranker: str | Path | None = None, rerank_top: int = 10) -> list[list[Hit]]:
    """`sentforge search`: the `top_k` texts nearest to each query by cosine similarity, best first; with
    `reranker` (a cross-encoder directory) the `max(top_k, rerank_top)` nearest re-ranked by its scores
    (a Hit's score is then the cross-encoder's).

    Give one of `corpus`, a text file (.txt, .jsonl with its `field`, .csv/.tsv with its `column`) encoded
    on each call with `model` (a Hit's id is the text's row), and `index`, a directory that `index_file`
    built: only the queries are encoded, by `model` or, by default, the model that built the index (another
    model is refused). A `top_k` above the texts held gives them all, with a warning. `seed` seeds the random
    generators (`set_seed`) once the options are checked; None leaves them as they are.
    """
    from sentforge.support.seed import check_seed

    if (corpus is None) == (index is None):
        raise ConfigError("give exactly one of --corpus (texts) and --index (a built index)")
    if seed is not None:
        check_seed(seed, "seed (--seed)")
    from sentforge.loading import load
    from sentforge.support.seed import set_seed

    if seed is not None:
        set_seed(seed)
    cross_encoder = _cross_encoder(reranker, device)
    depth = max(top_k, rerank_top) if cross_encoder is not None else top_k
    if index is not None:
        loaded = VectorIndex.load(index)
        if model is None and loaded.identity is None:
            raise ConfigError(f"--index {index} does not record its model (written by an older sentforge): give it "
                              "with -m")
        spec = model or loaded.identity.name
        _note_fewer(top_k, len(loaded), f"the index {index}")
        return _reranked(queries, loaded.search(load(spec, device), queries, depth, name=spec), cross_encoder, top_k)
    from sentforge.data.texts import count_texts, read_texts

    texts = read_texts(corpus, field=field, column=column)
    count_texts(corpus, texts, "--corpus")
    _note_fewer(top_k, len(texts), f"the corpus {corpus}")
    if model is None:
        raise ConfigError("model (-m): give the model that encodes the corpus")
    encoder = load(model, device)
    documents = encoder.encode(texts, batch_size=batch_size, normalize=True)
    vectors = encoder.encode(list(queries), batch_size=batch_size, normalize=True)
    hits = [[Hit(int(row), float(scores[row]), texts[row]) for row in np.argsort(-scores)[:depth]]
            for scores in vectors @ documents.T]
    return _reranked(queries, hits, cross_encoder, top_k)


def _cross_encoder(reranker: str | Path | None, device: str | None) -> Any:
    """The cross-encoder of --reranker, checked before anything is encoded (None without one)."""
    if reranker is None:
        return None
    from sentforge.cross_encoder import is_cross_encoder_dir, load_cross_encoder

    if not is_cross_encoder_dir(reranker):
        raise ConfigError(f"--reranker {reranker}: not a cross-encoder directory (a bi-encoder? give it as --model)")
    return load_cross_encoder(reranker, device=device)


def _reranked(queries: Sequence[str], hits: list[list[Hit]], cross_encoder: Any, top_k: int) -> list[list[Hit]]:
    """Each query's hits ordered by the cross-encoder's score of (query, text), the `top_k` best; unchanged
    without a cross-encoder."""
    if cross_encoder is None:
        return hits
    scores = iter(cross_encoder.predict([(q, hit.text) for q, found in zip(queries, hits) for hit in found]))
    rescored = [[Hit(hit.id, float(next(scores)), hit.text) for hit in found] for found in hits]
    return [sorted(found, key=lambda hit: -hit.score)[:top_k] for found in rescored]


def _note_fewer(top_k: int, held: int, where: str) -> None:
    """Say that each query gets fewer hits than `top_k` asks for, and why."""
    if top_k > held:
        logger.warning("-k %d but %s holds %d text%s: showing %d", top_k, where, held, "" if held == 1 else "s", held)
