"""The text layer every reward reads policy-written text through: one canonical reading (``canonical``).

See docs/text.md for the canonical forms and why each exists.
"""

from .canonical import canonical, fold_confusables, is_blank, latin_lookalikes, strip_invisible, unify_lines

__all__ = ["canonical", "fold_confusables", "is_blank", "latin_lookalikes", "strip_invisible", "unify_lines"]
