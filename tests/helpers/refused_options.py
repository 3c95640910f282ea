"""Run `sentforge ARGS` for each argument list given as JSON in argv[1], in this one process, and print as JSON
each run's exit code and stderr, then the heavy modules imported by all of them together (none, when every
command checks its options before it imports the model stack)."""

from __future__ import annotations

import contextlib
import io
import json
import sys

from sentforge.cli import main

HEAVY = ("torch", "transformers")

runs = []
for args in json.loads(sys.argv[1]):
    sys.argv = ["sentforge", *args]
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        try:
            main()
            code = 0
        except SystemExit as stop:
            code = stop.code
    runs.append({"args": args, "code": code, "stderr": err.getvalue()})
print(json.dumps({"runs": runs, "loaded": [name for name in HEAVY if name in sys.modules]}))
