"""`sentforge encode` run as a subprocess for tests/scale/test_streaming.py: optionally SIGKILLed in the middle of
writing chunk N (after part of its data reached the disk), and reporting its peak RSS.

usage: stream_worker.py [--kill-in-chunk N] [--rss-file PATH] -- ENCODE_ARGS...
"""

from __future__ import annotations

import argparse
import os
import resource
import signal
import sys

from sentforge.scale import streaming
from sentforge.cli import main


def kill_in_chunk(number: int) -> None:
    for writer in (streaming.NpyWriter, streaming.ShardWriter):
        original = writer.write

        def write(self, state, chunk, _original=original):
            if state["chunks_done"] == number:
                with open(self.partial if self.partial.is_file() else self.partial / "junk.npy", "ab") as handle:
                    handle.write(chunk.tobytes()[: chunk.nbytes // 2])
                os.kill(os.getpid(), signal.SIGKILL)
            _original(self, state, chunk)

        writer.write = write


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--kill-in-chunk", type=int)
    parser.add_argument("--rss-file")
    parser.add_argument("args", nargs=argparse.REMAINDER)
    options = parser.parse_args()
    if options.kill_in_chunk is not None:
        kill_in_chunk(options.kill_in_chunk)
    sys.argv = ["sentforge", *[a for a in options.args if a != "--"]]
    try:
        main()
    finally:
        if options.rss_file:
            with open(options.rss_file, "w") as handle:
                handle.write(str(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss))
