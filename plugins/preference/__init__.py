"""Training data from scored completions: DPO preference pairs and best-of-N / threshold selections for SFT.

Completions are grouped by prompt (``grouping``). A prompt's completions must sit on consecutive rows
(as ``rewardhub score`` writes them), so that input streams with one prompt in memory at a time;
``unsorted="spill"`` groups any order through a temporary on-disk index instead. Scores already in
the rows are reused; a prompt with raw rows is scored whole with a reward config, after grouping
(group-aware rewards see all its completions) (``pipeline``). Every row, prompt or pair left out is
counted by reason in :class:`Stats` (``options``).

    from rewardhub.preference import PairOptions, write_pairs
    stats = write_pairs("scored.jsonl", "pairs.parquet", PairOptions(min_margin=0.5, require=["format>=1"]))
    print(stats.summary())
"""

from .grouping import UnsortedInputError
from .options import PreferenceError, Requirement, Stats, score_of
from .pairs import PairOptions, iter_pairs, pairs_for_prompt, write_pairs
from .selection import SelectOptions, iter_selected, select_for_prompt, write_selection

__all__ = [
    "PairOptions",
    "PreferenceError",
    "Requirement",
    "SelectOptions",
    "Stats",
    "UnsortedInputError",
    "iter_pairs",
    "iter_selected",
    "pairs_for_prompt",
    "score_of",
    "select_for_prompt",
    "write_pairs",
    "write_selection",
]
