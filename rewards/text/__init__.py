"""The text layer every reward reads policy-written text through: one canonical reading (``canonical``) and one
multilingual lexicon of answer phrases, hedges and corrections (``lexicon``).

See docs/text.md for the canonical forms and why each exists.
"""

from . import lexicon
from .canonical import canonical, fold_confusables, is_blank, latin_lookalikes, strip_invisible, unify_lines

__all__ = ["lexicon", "canonical", "fold_confusables", "is_blank", "latin_lookalikes", "strip_invisible", "unify_lines"]
