"""The input of an encode engine: consecutive chunks of `chunk_size` records of a text file.

The local engine reads the chunks in one pass. The Ray engine's driver only notes where each chunk
begins and a checksum of its texts (`iter_starts`, a pass that keeps no texts), and its workers read
each chunk from there (`read_chunk`) with the same record reader, so every engine encodes the same texts
in the same chunks; a worker that finds other texts there (the file changed, or is another file on the
worker's machine) stops with an error instead of encoding them.
"""

from __future__ import annotations

import hashlib
import itertools
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from sentforge.data.texts import Position, iter_records, iter_texts
from sentforge.support.errors import InputFileError


class ChunkStart(NamedTuple):
    """Where chunk `index` begins, and the SHA-256 of its texts."""

    index: int
    position: Position
    sha256: str


def texts_sha256(texts: Iterable[str]) -> str:
    digest = hashlib.sha256()
    for text in texts:  # JSON strings delimit themselves: two lists of texts never share a digest
        digest.update(json.dumps(text).encode("utf-8"))
    return digest.hexdigest()


@dataclass(frozen=True)
class ChunkSource:
    """Chunks of `chunk_size` records of the text file at `path`, from chunk `skip_chunks` on."""

    path: Path
    chunk_size: int
    field: str | None = None
    column: str | None = None
    skip_chunks: int = 0

    def iter_chunks(self) -> Iterator[tuple[int, list[str]]]:
        """(chunk index, texts) of each chunk, read in one pass."""
        texts = iter_texts(self.path, self.field, self.column)
        for index in itertools.count():
            chunk = list(itertools.islice(texts, self.chunk_size))
            if not chunk:
                return
            if index >= self.skip_chunks:
                yield index, chunk

    def iter_starts(self) -> Iterator[ChunkStart]:
        """Where each chunk begins, in one pass that keeps no texts."""
        records = iter_records(self.path, self.field, self.column)
        for index in itertools.count():
            chunk = itertools.islice(records, self.chunk_size)
            first = next(chunk, None)
            if first is None:
                return
            if index >= self.skip_chunks:
                yield ChunkStart(index, first[0], texts_sha256(text for _, text in itertools.chain([first], chunk)))
            else:
                for _ in chunk:  # skipped: read on to the next chunk
                    pass

    def read_chunk(self, start: ChunkStart) -> list[str]:
        """The texts of the chunk that begins at `start` (from `iter_starts`), checked against its SHA-256."""
        records = iter_records(self.path, self.field, self.column, start.position)
        texts = [text for _, text in itertools.islice(records, self.chunk_size)]
        if texts_sha256(texts) != start.sha256:
            raise InputFileError(f"{self.path}:{start.position.line}: chunk {start.index} read from here differs from "
                                 "the one listed when the encode started (the file changed, or is another file here)")
        return texts
