"""Word-level explanations of a similarity: leave-one-word-out deletion and integrated gradients.

`words.py` maps word pieces to whole words, `deletion.py` and `gradients.py` score them, `result.py`
holds the `Explanation`, `render.py` prints and colours it, `api.py` is `sentforge.explain`.
"""

from sentforge.explanation.api import METHODS, explain
from sentforge.explanation.render import format_table, save_html, to_html
from sentforge.explanation.result import Explanation, TextExplanation, WordInfluence

__all__ = ["METHODS", "Explanation", "TextExplanation", "WordInfluence", "explain", "format_table", "save_html",
           "to_html"]
