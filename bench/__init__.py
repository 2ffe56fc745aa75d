"""Benchmarks, run as modules from the repository root (``python -m bench.math``), each comparing
rewardhub with a baseline in the same run. As modules, ``bench/math.py`` cannot shadow the standard
library's ``math`` the way a script directory on ``sys.path`` would."""
