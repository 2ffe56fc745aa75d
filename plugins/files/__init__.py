"""The file pipeline's public seam: reading rows, the Arrow codec, writing outputs in place, a run's summary.

``rewardhub score`` is built from these, and so is every other engine that reads and writes the same
files (``rewardhub.ray``): rows read and checked as the command reads them (bad rows numbered and
skipped), mixed shapes stored as JSON columns and decoded back, outputs staged and renamed into place,
the per-reward statistics the command prints.
"""

from .._io import InputRow, iter_input, parquet_parts, read_rows
from .._output import replacing, write_rows
from .._score_file import RewardStats, ScoreSummary, count_scored, valid_rows
from .._tables import DecodedColumns, arrow_column, decoded_column, json_column, rows_table, table_rows

__all__ = ["DecodedColumns", "InputRow", "RewardStats", "ScoreSummary", "arrow_column", "count_scored", "decoded_column",
           "iter_input", "json_column", "parquet_parts", "read_rows", "replacing", "rows_table", "table_rows",
           "valid_rows", "write_rows"]
