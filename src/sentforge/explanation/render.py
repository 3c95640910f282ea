"""An Explanation as a terminal table and as a self-contained HTML page with both texts coloured by influence."""

from __future__ import annotations

import html
import os

from sentforge.explanation.result import Explanation, TextExplanation
from sentforge.support.io import atomic_file
from sentforge.support.output_guard import html_signature

EXPLAIN = "explain"  # the command family that signs the HTML page, and locks it while it is written
_WORD_WIDTH = 24
# (attribute of WordInfluence, heading)
_COLUMNS = {"deletion": ("deletion", "deletion"), "gradients": ("gradient", "gradients")}


def _clip(word: str) -> str:
    word = " ".join(word.split())
    return word if len(word) <= _WORD_WIDTH else word[:_WORD_WIDTH - 1] + "~"


def summary_lines(explanation: Explanation) -> list[str]:
    lines = [f"model: {explanation.model}", f"cosine similarity: {explanation.similarity:.4f}"]
    grads = explanation.gradients
    if grads is not None and grads.baseline == "pair":
        gain = grads.similarity - grads.baseline_similarity[0]
        lines.append(f"integrated gradients: {grads.steps} steps from both texts as padding (similarity "
                     f"{grads.baseline_similarity[0]:.4f}); attributions sum to "
                     f"{gain + grads.completeness_gap[0]:+.4f}, "
                     f"the similarity gain is {gain:+.4f}")
    elif grads is not None:
        gains = [grads.similarity - base for base in grads.baseline_similarity]
        sums = ", ".join(f"{side} {gain + gap:+.4f} (gain {gain:+.4f})"
                         for side, gain, gap in zip("ab", gains, grads.completeness_gap))
        lines.append(f"integrated gradients: {grads.steps} steps, each text from padding with the other kept; "
                     f"attributions sum to {sums}")
    agree, both = explanation.sign_agreement()
    if both:
        lines.append(f"deletion and gradients agree in sign on {agree} of {both} words ({100 * agree / both:.0f}%)")
    lines += [f"warning: {warning}" for warning in explanation.warnings]
    return lines


UNKNOWN_NOTE = "* the tokenizer maps this word only to its unknown token: the model cannot tell it from another one"


def _has_unknown(explanation: Explanation) -> bool:
    return any(w.unknown for w in (*explanation.a.words, *explanation.b.words))


def format_table(explanation: Explanation, top: int | None = 10) -> str:
    """The summary and the `top` most influential words of both texts (text, word, one column per method)."""
    columns = [_COLUMNS[m] for m in explanation.methods]
    header = f"{'text':<5} {'word':<{_WORD_WIDTH}}" + "".join(f" {title:>10}" for _, title in columns)
    rows = []
    for side, word in explanation.ranked(top):
        values = "".join(f" {getattr(word, attr):>+10.4f}" for attr, _ in columns)
        shown = _clip(word.word)[:_WORD_WIDTH - 2] + " *" if word.unknown else _clip(word.word)
        rows.append(f"{side:<5} {shown:<{_WORD_WIDTH}}{values}")
    if not rows:
        rows.append("(no words)")
    note = [UNKNOWN_NOTE] if any(word.unknown for _, word in explanation.ranked(top)) else []
    return "\n".join([*summary_lines(explanation), "", header, *rows, *note])


def _colour(value: float, scale: float) -> str:
    strength = min(1.0, abs(value) / scale) if scale > 0 else 0.0
    rgb = "22, 150, 60" if value > 0 else "210, 40, 40"
    return f"rgba({rgb}, {0.85 * strength:.3f})"


def _coloured(text: TextExplanation, attr: str, scale: float) -> str:
    """The text with each word in a span coloured by its influence (green raises the similarity, red lowers it)."""
    parts, at = [], 0
    for word in text.words:
        if word.start < at:  # overlapping spans cannot be coloured twice
            continue
        value = getattr(word, attr)
        parts.append(html.escape(text.text[at:word.start]))
        mark, note = (' class="unknown"', " (unknown token)") if word.unknown else ("", "")
        parts.append(f'<span{mark} style="background: {_colour(value, scale)}" title="{value:+.4f}{note}">'
                     f"{html.escape(text.text[word.start:word.end])}</span>")
        at = word.end
    parts.append(html.escape(text.text[at:]))
    return "".join(parts)


def to_html(explanation: Explanation) -> str:
    """A standalone HTML page: the summary, then both texts coloured by each method's word influences."""
    sections = []
    for method in explanation.methods:
        attr, title = _COLUMNS[method]
        values = [abs(getattr(w, attr)) for w in explanation.a.words + explanation.b.words]
        scale = max(values, default=0.0)
        sections.append(
            f"<h2>{html.escape(title)}</h2>\n"
            f'<p class="text"><b>a</b> {_coloured(explanation.a, attr, scale)}</p>\n'
            f'<p class="text"><b>b</b> {_coloured(explanation.b, attr, scale)}</p>\n'
            f'<p class="scale">full colour = {scale:.4f}; hover a word for its value</p>')
    summary = "".join(f"<li>{html.escape(line)}</li>" for line in summary_lines(explanation))
    return (
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n" + html_signature(EXPLAIN) + "\n"
        "<title>sentforge explain</title>\n<style>\n"
        "body { font-family: sans-serif; max-width: 60em; margin: 2em auto; line-height: 1.8; }\n"
        ".text span { border-radius: 3px; padding: 1px 2px; }\n.scale { color: #666; font-size: 0.9em; }\n"
        ".text span.unknown { outline: 1px dashed #333; }\n"
        "</style>\n</head>\n<body>\n<h1>Why are these texts similar?</h1>\n"
        f"<ul>{summary}</ul>\n"
        "<p>Green words raise the similarity, red words lower it."
        + (" Words in a dashed box map only to the tokenizer's unknown token: the model cannot tell them from any "
           "other unknown word." if _has_unknown(explanation) else "") + "</p>\n"
        + "\n".join(sections) + "\n</body>\n</html>\n")


def save_html(explanation: Explanation, path: str | os.PathLike, overwrite: bool = False) -> None:
    """Write `to_html(explanation)` atomically (refusing an existing file unless `overwrite`)."""
    with atomic_file(path, "w", overwrite) as handle:
        handle.write(to_html(explanation))
