"""What the test modules share, in one place; no test module imports from another.

- ``trees``: scratch copies of the repository that run Snakemake, the one MNIST copy they
  share, and the small config's finished tree (``smoke_tree``).
- ``training``: a tiny model, data and settings for tests that train in-process.
- ``exports``: trees and reference folders made up for the reference export's tests.
"""
