"""How far a reader walks through adapt's code: one tiny `sentforge adapt` run traced, counted by file.

    python benchmarks/reports/adapt_walk.py --candidates mnrl --seed 0

Builds a tiny random BERT and a small domain (unlabelled texts, positive pairs, dev and test re-ranking files)
in a temporary folder, runs `sentforge adapt` on them through the command line under `sys.setprofile`, and
prints, for the functions of src/sentforge/adaptation/ and src/sentforge/harness/ that the run calls:

- the walk: each function once, in the order of its first call (a reader's stops), the files they are in, the
  changes of file along it and the returns to a file already left, and how often the walk enters each file; once
  over every function, once over the functions handed a candidate, its run description or its result (the
  report, whose rows are the results, and collections of them included) - the stops of a reader who follows
  one candidate from the command line to its row in report.md;
- the calls: every call in order (each training step's callbacks included), with their changes of file;
- the candidate-kind compares: comparisons of a kind (`kind == "meta"`, `kind in ("meta", "distil")`) with a
  string literal, in the package's source, counted outside and inside adaptation/candidates/.

Generated code (dataclass methods), comprehensions, lambdas, and module and class bodies (run on import) are
not stops; a template's rendering (report.md.jinja) is one, handed what it renders. The figures
depend on the candidates run and on the budget; the run's own report is left in the temporary folder.
"""

from __future__ import annotations

import argparse
import inspect
import json
import random
import re
import sys
import tempfile
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "src" / "sentforge"
WALKED = ("adaptation", "harness")
KINDS = ("start", "train", "meta", "distil", "ladder", "recipe", "continuation")
_LITERAL = "[\"'](?:" + "|".join(KINDS) + ")[\"']"
KIND_COMPARE = re.compile(
    rf"kind[\"']?\]?\s*(?:==|!=|not\s+in|in)\s*[(\[{{]?\s*{_LITERAL}"  # kind == "meta", r["kind"] in ("a", ...)
    rf"|{_LITERAL}\s*(?:==|!=)\s*[\w.\[\]\"']*kind\b")  # "meta" == kind
WORDS = ("the cat sat on the mat", "a dog runs in the park", "how do i reset my password", "the weather is nice today",
         "my invoice shows a double charge", "the app crashes on start", "a man is playing a guitar",
         "two women are walking on the beach", "the train leaves at noon", "please cancel my subscription",
         "where can i change the language", "a child eats an apple")


def tiny_model(path: Path, seed: int) -> Path:
    """A two-layer random BERT with a fixed WordPiece vocabulary of the domain's words."""
    import torch
    from transformers import BertConfig, BertModel

    from sentforge.recipes.tokenizer import wordpiece_from_vocabulary

    words = sorted({word for text in WORDS for word in text.split()})
    characters = sorted({c for word in words for c in word})
    tokenizer = wordpiece_from_vocabulary(words + characters + [f"##{c}" for c in characters])
    torch.manual_seed(seed)
    config = BertConfig(vocab_size=len(tokenizer), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=64, max_position_embeddings=64)
    BertModel(config).save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


def _jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def tiny_domain(data: Path, seed: int) -> Path:
    """unlabelled.txt, labelled.jsonl (positive pairs), dev.jsonl and test.jsonl (re-ranking) in `data`."""
    data.mkdir(parents=True)
    texts = [f"{a} and {b}" for a in WORDS for b in WORDS if a != b]
    random.Random(seed).shuffle(texts)
    (data / "unlabelled.txt").write_text("".join(f"{t}\n" for t in texts[:40]), encoding="utf-8")
    n = len(WORDS)
    _jsonl(data / "labelled.jsonl", [{"sentence1": WORDS[i], "sentence2": f"{WORDS[i]} and {WORDS[(i + 1) % n]}"}
                                     for i in range(n)])
    queries = [{"query": WORDS[i], "positive": [f"{WORDS[i]} and {WORDS[(i + 2) % n]}"],
                "negative": [WORDS[(i + 3) % n], f"{WORDS[(i + 4) % n]} and {WORDS[(i + 6) % n]}"]} for i in range(n)]
    _jsonl(data / "dev.jsonl", queries[:8])
    _jsonl(data / "test.jsonl", queries[8:])
    return data


def handled_types() -> tuple[type, ...]:
    """What the walk follows: the candidate, its run description and its result (the report, whose rows are
    the results, included)."""
    from sentforge.adaptation.candidates.base import CandidateKind
    from sentforge.adaptation.method import Candidate, Method
    from sentforge.adaptation.parallel import CandidateTask
    from sentforge.adaptation.report import AdaptReport
    from sentforge.adaptation.result import CandidateResult
    from sentforge.adaptation.runner import RecipeRun

    return Candidate, CandidateKind, Method, CandidateTask, RecipeRun, CandidateResult, AdaptReport


def _holds(value, types: tuple[type, ...]) -> bool:
    """`value` is one of `types`, report.json's mapping, or a list, tuple, set or dict (its values) with one among
    its first items; a template's context holds what it was rendered with."""
    if type(value).__name__ == "Context" and hasattr(value, "get_all"):  # jinja2.runtime.Context
        return any(_holds(item, types) for item in value.get_all().values())
    if isinstance(value, types) or (isinstance(value, dict) and isinstance(value.get("candidates"), dict)):
        return True
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, (list, tuple, set, frozenset)):
        return any(isinstance(item, types) for item in list(value)[:64])
    return False


class Trace:
    """The calls of functions of the walked folders, in order: (file relative to the package, qualified name).

    `handling` holds the calls among them with an argument (`self` included) that is a candidate, a run description
    or a result, or a collection of them: the stops of a reader who follows one candidate to its row in report.md.
    """

    def __init__(self) -> None:
        self.calls: list[tuple[str, str]] = []
        self.handling: list[tuple[str, str]] = []
        self.roots = tuple(str(PACKAGE / folder) + "/" for folder in WALKED)
        self.types = handled_types()

    def __call__(self, frame, event, arg):
        if event != "call":
            return
        code = frame.f_code
        # Functions only: module and class bodies (run once, on import) have no locals of their own.
        if (code.co_filename.startswith(self.roots) and code.co_flags & inspect.CO_NEWLOCALS
                and not code.co_name.startswith("<")):
            call = (Path(code.co_filename).relative_to(PACKAGE).as_posix(), code.co_qualname)
            if call[0].endswith(".jinja") and call[1] != "root":  # Jinja's generated helpers inside the rendering
                return
            self.calls.append(call)
            n_arguments = (code.co_argcount + code.co_kwonlyargcount + bool(code.co_flags & inspect.CO_VARARGS)
                           + bool(code.co_flags & inspect.CO_VARKEYWORDS))
            arguments = [frame.f_locals.get(name) for name in code.co_varnames[:n_arguments]]
            if any(_holds(value, self.types) for value in arguments):
                self.handling.append(call)


def hops(files: list[str]) -> tuple[int, int, Counter]:
    """(changes of file, changes into a file already left, entries per file) along `files`."""
    changes = returns = 0
    left: set[str] = set()
    entries: Counter = Counter()
    for index, name in enumerate(files):
        if index and name == files[index - 1]:
            continue
        entries[name] += 1
        if index:
            changes += 1
            left.add(files[index - 1])
            returns += name in left
    return changes, returns, entries


def kind_compares() -> tuple[Counter, Counter]:
    """({file: compares} outside adaptation/candidates/, the same inside it) over the package's source."""
    outside, inside = Counter(), Counter()
    for path in sorted(PACKAGE.rglob("*.py")):
        name = path.relative_to(PACKAGE).as_posix()
        found = len(KIND_COMPARE.findall(path.read_text(encoding="utf-8")))
        if found:
            (inside if name.startswith("adaptation/candidates/") else outside)[name] += found
    return outside, inside


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--candidates", default="mnrl", help="the adapt candidates to run (default: mnrl)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--budget-minutes", type=float, default=5.0)
    parser.add_argument("--list", action="store_true", help="print the walk's stops, one line each")
    args = parser.parse_args()

    from sentforge.cli import app

    work = Path(tempfile.mkdtemp(prefix="adapt-walk-"))
    model, data = tiny_model(work / "model", args.seed), tiny_domain(work / "data", args.seed)
    command = ["adapt", "--model", str(model), "--unlabelled", str(data / "unlabelled.txt"),
               "--dev", str(data / "dev.jsonl"), "--labelled", str(data / "labelled.jsonl"),
               "--test", str(data / "test.jsonl"), "--output", str(work / "out"), "--candidates", args.candidates,
               "--budget-minutes", str(args.budget_minutes), "--eval-every", "2", "--max-epochs", "2",
               "--keep-dev-texts", "--seed", str(args.seed)]
    trace = Trace()
    sys.setprofile(trace)
    try:
        app(command, standalone_mode=False)
    finally:
        sys.setprofile(None)

    print(f"adapt --candidates {args.candidates}: the functions of {' and '.join(f'{f}/' for f in WALKED)} "
          f"(output in {work})")
    walks = {"every function": trace.calls, "the functions handed a candidate, its run or its result": trace.handling}
    for title, calls in walks.items():
        first = dict.fromkeys(calls)  # first calls, in order
        walk_files = [name for name, _ in first]
        changes, returns, entries = hops(walk_files)
        print(f"walk over {title}: {len(first)} stops (distinct functions), {len(set(walk_files))} files, "
              f"{changes} changes of file, {returns} returns to a file already left")
        print("  entries per file: " + ", ".join(f"{name} {count}" for name, count in entries.most_common()))
    call_changes, call_returns, _ = hops([name for name, _ in trace.calls])
    print(f"calls: {len(trace.calls)}, {call_changes} changes of file, {call_returns} returns to a file already left")
    outside, inside = kind_compares()
    print(f"candidate-kind compares with a string: {sum(outside.values())} in {len(outside)} files outside "
          f"adaptation/candidates/ ({', '.join(f'{n} {c}' for n, c in outside.most_common()) or 'none'}); "
          f"{sum(inside.values())} inside it")
    if args.list:
        handling = set(trace.handling)
        for index, (name, function) in enumerate(dict.fromkeys(trace.calls), 1):
            print(f"{index:4d} {'*' if (name, function) in handling else ' '} {name}: {function}")


if __name__ == "__main__":
    main()
