"""The HTML reward report: numbers (``stats``, ``training``), charts (``plots``), markup (``html``),
the page (``page``) and the ``rewardhub report`` subcommand (``command``)."""

from .page import write_report
from .stats import ReportError

__all__ = ["ReportError", "write_report"]
