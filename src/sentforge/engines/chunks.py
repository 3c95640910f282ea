"""The input of an encode engine: consecutive chunks of `chunk_size` records of a text file.

The local engine reads the chunks in one pass. The Ray engine's driver only notes where each chunk
begins (`iter_starts`, a pass that keeps no texts) and its workers read each chunk from there
(`read_chunk`) with the same record reader, so every engine encodes the same texts in the same chunks.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from sentforge.data.texts import Position, iter_records, iter_texts


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

    def iter_starts(self) -> Iterator[tuple[int, Position]]:
        """(chunk index, where its first record begins) of each chunk, in one pass that keeps no texts."""
        for number, (position, _) in enumerate(iter_records(self.path, self.field, self.column)):
            index, rest = divmod(number, self.chunk_size)
            if not rest and index >= self.skip_chunks:
                yield index, position

    def read_chunk(self, start: Position) -> list[str]:
        """The texts of the chunk that begins at `start` (a position from `iter_starts`)."""
        records = iter_records(self.path, self.field, self.column, start)
        return [text for _, text in itertools.islice(records, self.chunk_size)]
