"""`SCRIPT --help` for several benchmark scripts in one interpreter, for tests/test_benchmarks.py: each script
runs as `python SCRIPT --help` would run it (as __main__, its folder first on the import path), so the heavy
imports (torch, transformers) are paid once. The last line printed is JSON: script -> {"code", "output"}.

usage: benchmark_help.py SCRIPT...
"""

from __future__ import annotations

import contextlib
import io
import json
import runpy
import sys
import traceback
from pathlib import Path


def help_of(script: str) -> dict:
    output = io.StringIO()
    saved_argv, saved_path = sys.argv, sys.path[:]
    sys.argv = [script, "--help"]
    sys.path[0] = str(Path(script).resolve().parent)
    code = 0
    try:
        with contextlib.redirect_stdout(output), contextlib.redirect_stderr(output):
            runpy.run_path(script, run_name="__main__")
    except SystemExit as exit_:
        code = exit_.code if isinstance(exit_.code, int) else int(exit_.code is not None)
    except Exception:  # an import or a parser that fails: reported, the other scripts go on
        code = 1
        output.write(traceback.format_exc())
    finally:
        sys.argv, sys.path[:] = saved_argv, saved_path
    return {"code": code, "output": output.getvalue()}


if __name__ == "__main__":
    results = {script: help_of(script) for script in sys.argv[1:]}
    print("\n" + json.dumps(results))
