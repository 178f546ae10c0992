"""Benchmarks (``make bench``). Each ``bench_*.py`` module here has ``run(full: bool) -> dict``."""
