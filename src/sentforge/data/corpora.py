"""Unlabelled corpora for pre-training and unsupervised methods: NLTK data packages read straight
from their zips, plain-text files and JSON lines; sentence splitting, de-duplication, length filter.

The NLTK packages keep their own sentence structure where they have one (Brown's tagged
sentences, CoNLL-2000's blank-line-separated sentences, Movie Reviews' one sentence per line,
RTE's text/hypothesis pairs); running prose (ABC, State of the Union, inaugural addresses, the
Penn Treebank sample's raw files, web text) goes through a regex sentence splitter, so nothing
needs NLTK or its punkt data.
"""

from __future__ import annotations

import logging
import re
import zipfile
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from xml.etree import ElementTree

from sentforge.data.texts import decoded_lines, read_texts
from sentforge.support.errors import ConfigError, InputFileError

logger = logging.getLogger(__name__)

# A sentence ends at . ! or ? (optionally followed by closing quotes/brackets) before whitespace and
# an upper-case letter, digit or opening quote. Common abbreviations do not end a sentence.
_ABBREVIATIONS = ("Mr", "Mrs", "Ms", "Dr", "Prof", "Sr", "Jr", "St", "Mt", "No", "Gen", "Gov", "Sen", "Rep",
                  "Col", "Lt", "Capt", "Sgt", "Inc", "Ltd", "Co", "Corp", "vs", "etc", "e.g", "i.e", "U.S",
                  "Jan", "Feb", "Mar", "Apr", "Jun", "Jul", "Aug", "Sep", "Sept", "Oct", "Nov", "Dec")
_SENTENCE_END = re.compile(r"""([.!?]["')\]]*)\s+(?=["'(\[]?[A-Z0-9])""")
_ABBREVIATION_END = re.compile(r"(?:^|[\s(])(?:%s)\.$|(?:^|\s)[A-Z]\.$"
                               % "|".join(re.escape(a) for a in _ABBREVIATIONS))
_SPACES = re.compile(r"\s+")
CORPUS_SUFFIXES = (".zip", ".txt", ".jsonl")


def split_sentences(text: str) -> list[str]:
    """Split running text into sentences with a regex (no model, no downloads)."""
    text = _SPACES.sub(" ", text).strip()
    if not text:
        return []
    sentences: list[str] = []
    start = 0
    for match in _SENTENCE_END.finditer(text):
        candidate = text[start:match.end(1)]
        if _ABBREVIATION_END.search(candidate.rstrip("\"')]")):
            continue
        sentences.append(candidate)
        start = match.end()
    sentences.append(text[start:].strip())
    return [s for s in sentences if s]


_DETOK_RULES = [
    (re.compile(r"``|''"), '"'),
    (re.compile(r" ([.,;:!?%)\]}])"), r"\1"),
    (re.compile(r"([(\[{$]) "), r"\1"),
    (re.compile(r" (n't|'s|'re|'ve|'ll|'d|'m)\b", re.IGNORECASE), r"\1"),
    (re.compile(r'" (.*?) "'), r'"\1"'),
]


def detokenize(tokens: Iterable[str]) -> str:
    """Join Penn-Treebank-style tokens into ordinary text (`do n't ,` -> `don't,`)."""
    text = " ".join(tokens)
    for pattern, replacement in _DETOK_RULES:
        text = pattern.sub(replacement, text)
    return text.strip()


# --- NLTK packages -------------------------------------------------------------------------------


def _members(archive: zipfile.ZipFile, prefix: str, suffix: str = "",
             exclude: tuple[str, ...] = ("README", "README.txt", "CONTENTS", "cats.txt")) -> list[str]:
    names = [n for n in archive.namelist() if n.startswith(prefix) and not n.endswith("/") and n.endswith(suffix)]
    return sorted(n for n in names if n.rsplit("/", 1)[-1] not in exclude)


def _text(archive: zipfile.ZipFile, name: str) -> str:
    data = archive.read(name)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("latin-1")  # a few older NLTK files are ISO-8859-1


def _brown(archive: zipfile.ZipFile) -> Iterator[str]:
    # One tagged sentence per tab-indented line: word/tag word/tag ...
    for name in _members(archive, "brown/"):
        for line in _text(archive, name).splitlines():
            if line.strip():
                yield detokenize(token.rsplit("/", 1)[0] for token in line.split())


def _conll2000(archive: zipfile.ZipFile) -> Iterator[str]:
    # One "word POS chunk" per line, sentences separated by blank lines.
    for name in _members(archive, "conll2000/", ".txt"):
        words: list[str] = []
        for line in _text(archive, name).splitlines() + [""]:
            if line.strip():
                words.append(line.split()[0])
            elif words:
                yield detokenize(words)
                words = []


def _line_per_sentence(prefix: str, suffix: str = "") -> Callable[[zipfile.ZipFile], Iterator[str]]:
    def read(archive: zipfile.ZipFile) -> Iterator[str]:
        for name in _members(archive, prefix, suffix):
            for line in _text(archive, name).splitlines():
                if line.strip():
                    yield detokenize(line.split())
    return read


def _running_text(prefix: str, suffix: str = "", line_prefix: re.Pattern[str] | None = None,
                  skip: re.Pattern[str] | None = None) -> Callable[[zipfile.ZipFile], Iterator[str]]:
    """Paragraph-per-line prose: regex-split each line (after removing a speaker label, say)."""
    def read(archive: zipfile.ZipFile) -> Iterator[str]:
        for name in _members(archive, prefix, suffix):
            for line in _text(archive, name).splitlines():
                if skip is not None and skip.search(line):
                    continue
                if line_prefix is not None:
                    line = line_prefix.sub("", line)
                yield from split_sentences(line)
    return read


def _pros_cons(archive: zipfile.ZipFile) -> Iterator[str]:
    tag = re.compile(r"</?(?:Pros|Cons)>")
    for name in _members(archive, "pros_cons/", ".txt"):
        for line in _text(archive, name).splitlines():
            text = tag.sub("", line).strip()
            if text:
                yield text


def _rte(archive: zipfile.ZipFile) -> Iterator[str]:
    for name in _members(archive, "rte/", ".xml"):
        try:
            root = ElementTree.fromstring(archive.read(name))
        except ElementTree.ParseError as err:
            raise InputFileError(f"{archive.filename}:{name}: invalid XML ({err})") from None
        for pair in root.iter("pair"):
            for part in ("t", "h"):
                node = pair.find(part)
                if node is not None and node.text:
                    yield from split_sentences(node.text)


NLTK_READERS: dict[str, Callable[[zipfile.ZipFile], Iterator[str]]] = {
    "brown": _brown,
    "conll2000": _conll2000,
    "movie_reviews": _line_per_sentence("movie_reviews/", ".txt"),
    "abc": _running_text("abc/", ".txt"),
    "pros_cons": _pros_cons,
    "webtext": _running_text("webtext/", ".txt", line_prefix=re.compile(r"^[A-Z][\w .#'-]{0,30}:\s+")),
    "state_union": _running_text("state_union/", ".txt"),
    "inaugural": _running_text("inaugural/", ".txt"),
    "treebank": _running_text("treebank/raw/", skip=re.compile(r"^\.START")),
    "rte": _rte,
}


def read_nltk_zip(path: str | Path) -> list[str]:
    """Sentences of an NLTK data package zip as shipped (`brown.zip`, `abc.zip`, ...).

    A zip that is not one of the known packages is read as a zip of plain-text files.
    """
    path = Path(path)
    try:
        archive = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError) as err:
        raise InputFileError(f"{path}: not a readable zip file ({err})") from None
    with archive:
        reader = NLTK_READERS.get(path.stem) or _running_text("", ".txt")
        return list(reader(archive))


# --- files and folders ---------------------------------------------------------------------------


def read_corpus(path: str | Path, field: str | None = None, split: bool = True) -> list[str]:
    """Sentences from a corpus path.

    A directory: every `.zip`, `.txt` and `.jsonl` file in it (sorted by name). A `.zip`: an NLTK
    package (see `read_nltk_zip`). A `.txt`: one paragraph or sentence per line. A `.jsonl`: the
    text under `field` (default "text"). Plain text and JSONL records are regex-split into sentences
    unless `split` is False.
    """
    path = Path(path)
    if not path.exists():
        raise InputFileError(f"corpus not found: {path}")
    if path.is_dir():
        files = sorted(p for p in path.iterdir() if p.suffix.lower() in CORPUS_SUFFIXES)
        if not files:
            raise InputFileError(f"corpus directory {path} holds no .zip, .txt or .jsonl files")
        sentences = []
        for file in files:
            part = read_corpus(file, field, split)
            logger.info("%s: %d sentences", file.name, len(part))
            sentences.extend(part)
        return sentences
    suffix = path.suffix.lower()
    if suffix == ".zip":
        return read_nltk_zip(path)
    if suffix not in CORPUS_SUFFIXES:
        raise InputFileError(f"{path}: unsupported corpus file type {suffix or '(none)'}; use .zip, .txt or .jsonl")
    texts = read_texts(path, field=field)
    if not split:
        return [t.strip() for t in texts if t.strip()]
    sentences = [s for text in texts for s in split_sentences(text)]
    # Said because adapt (--unlabelled) reads a line as one text: the counts of the two commands differ.
    logger.info("%s: %d texts split into %d sentences (a line may hold a paragraph; split=False, --no-split, "
                "trains on one text per line as adapt does)", path.name, len(texts), len(sentences))
    return sentences


@dataclass(frozen=True)
class SentenceFilter:
    """Keep sentences with `min_words`..`max_words` whitespace words, and drop repeats.

    Repeats are detected after lower-casing and collapsing whitespace; the first occurrence stays.
    """

    min_words: int = 3
    max_words: int = 128
    deduplicate: bool = True

    def __post_init__(self) -> None:
        if self.min_words < 1 or self.max_words < self.min_words:
            raise ConfigError(f"sentence length filter needs 1 <= min_words <= max_words, "
                              f"got {self.min_words}..{self.max_words}")

    def __call__(self, sentences: Iterable[str]) -> list[str]:
        seen: set[str] = set()
        kept = []
        for sentence in sentences:
            sentence = _SPACES.sub(" ", sentence).strip()
            if not self.min_words <= len(sentence.split(" ")) <= self.max_words:
                continue
            if self.deduplicate:
                key = sentence.lower()
                if key in seen:
                    continue
                seen.add(key)
            kept.append(sentence)
        return kept


def load_sentences(paths: Iterable[str | Path], sentence_filter: SentenceFilter | None = None,
                   field: str | None = None, split: bool = True) -> list[str]:
    """Read, split, filter and de-duplicate the sentences of several corpus paths, in order.

    Corpus paths are read by `read_corpus`; a file of any other type is read as one sentence per line.
    """
    sentences: list[str] = []
    for path in map(Path, paths):
        if path.is_file() and path.suffix.lower() not in CORPUS_SUFFIXES:
            sentences.extend(line.strip() for line in decoded_lines(path) if line.strip())
        else:
            sentences.extend(read_corpus(path, field, split))
    kept = (sentence_filter or SentenceFilter())(sentences)
    logger.info("corpus: %d sentences read, %d kept after the length filter and de-duplication",
                len(sentences), len(kept))
    return kept
