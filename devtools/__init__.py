"""Developer tooling: benchmarks, the demo screen generator and the scripted crowd.

The product (``annotation``, ``pipeline``, ``frontend``) never imports this package (an import-linter
contract in ``pyproject.toml``), and the container image leaves it out.
"""
