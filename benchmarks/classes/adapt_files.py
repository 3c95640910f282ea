"""The files of `sentforge adapt` from class-labelled texts on a set of benchmarks/classes: k labelled texts per
class, a dev split apart from them, the set's test file; then the adapt command to run on them.

    python benchmarks/classes/adapt_files.py trec --coarse --work-dir runs/adapt-classes --shots 8
    python benchmarks/classes/adapt_files.py qatarliving --work-dir runs/adapt-classes --shots 8

The set's training side is split once as labels_check.py splits it (seeded: --dev-size texts are the dev split,
500 or a third of a side of fewer than 1,500 texts, the rest the pool); the labelled file is the pool's draw of
--shots texts per class with --seed (data.classes.per_class_draw, the draw `sentforge labels` takes at that
size in its first repeat). With --drop-heldout-copies the pool first loses every text with the words of a dev or
test text (the rule adapt's dev hygiene applies to class-labelled texts): TREC's training file holds copies of
its test questions, which adapt drops before training and SetFit would train on, so that both sides of
setfit_ab.py train on the same texts. WORK/SET/labelled.jsonl, dev.jsonl and test.jsonl are written, the texts of each
class in the pool, the labelled file, dev and test are printed, then the `sentforge adapt` line.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchlib import DATA
from labels_check import DEV_HELP, splits, write_jsonl
from setfit_ab import SETS


def print_class_counts(parts: dict[str, list[tuple[str, str]]]) -> None:
    """Texts of each class in each part: a column per part, a row per class and a total row."""
    from sentforge.data.classes import sorted_classes

    counts = {name: Counter(y for _, y in rows) for name, rows in parts.items()}
    classes = sorted_classes({y for rows in parts.values() for _, y in rows})
    width = max(len("class"), *(len(str(y)) for y in classes))
    print(f"  {'class':{width}s}" + "".join(f"  {name:>8s}" for name in parts))
    for label in classes:
        print(f"  {str(label):{width}s}" + "".join(f"  {counts[name][label]:8d}" for name in parts))
    print(f"  {'all':{width}s}" + "".join(f"  {len(rows):8d}" for rows in parts.values()))


def without_heldout_copies(pool: list[tuple[str, str]], heldout: list[str]) -> list[tuple[str, str]]:
    """The pool less its texts that have the words of a held-out text, as adapt's dev hygiene drops them."""
    from sentforge.adaptation.hygiene import SAME_WORDS
    from sentforge.data.near_duplicates import near_duplicates

    copies = near_duplicates([t for t, _ in pool], heldout, threshold=SAME_WORDS)
    print(f"dropped from the pool {int(copies.sum())} of {len(pool)} texts that have the words of a dev or test text")
    return [row for row, copy in zip(pool, copies) if not copy]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("set", choices=sorted(SETS))
    parser.add_argument("--coarse", action="store_true", help="trec: the 6 coarse classes (default: the fine ones).")
    parser.add_argument("--data-dir", type=Path, default=DATA)
    parser.add_argument("--work-dir", type=Path, required=True)
    parser.add_argument("--shots", type=int, default=8, help="Labelled texts per class.")
    parser.add_argument("--dev-size", type=int, default=None, help=DEV_HELP)
    parser.add_argument("--model", default="all-MiniLM-L6-v2", help="The start model of the printed command.")
    parser.add_argument("--budget-minutes", type=float, default=10.0, help="The printed command's budget.")
    parser.add_argument("--seed", type=int, default=0, help="The dev split's and the draw's seed.")
    parser.add_argument("--drop-heldout-copies", action="store_true",
                        help="Draw from the pool without the texts that have the words of a dev or test text.")
    options = parser.parse_args()

    from sentforge.data.classes import per_class_draw

    pool, dev, test = splits(options)
    if options.drop_heldout_copies:
        pool = without_heldout_copies(pool, [t for t, _ in dev + test])
    labelled = per_class_draw(pool, options.shots, options.seed)
    folder = options.work_dir / f"{options.set}{'-coarse' if options.coarse else ''}"
    files = {name: write_jsonl(folder / f"{name}.jsonl", rows) for name, rows in
             (("labelled", labelled), ("dev", dev), ("test", test))}
    print(f"wrote {', '.join(map(str, files.values()))}")
    print_class_counts({"pool": pool, "labelled": labelled, "dev": dev, "test": test})
    print(shlex.join(["sentforge", "adapt", "--model", options.model, "--labelled", str(files["labelled"]),
                      "--dev", str(files["dev"]), "--test", str(files["test"]), "--output", str(folder / "adapted"),
                      "--budget-minutes", f"{options.budget_minutes:g}", "--seed", str(options.seed)]))


if __name__ == "__main__":
    main()
