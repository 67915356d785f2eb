"""Reference results: a small, tracked copy of a finished run's answer, checkable bit for bit.

    python -m workflow.reference export                  # results/full/ -> reference/full/
    python -m workflow.reference export --configfile config/smoke.yaml     # ... smoke/
    python -m workflow.reference export --tree /path/to/other/clone     # its results/full/
    python -m workflow.reference restore         # reference/full/'s pair results -> results/full/

A reference folder holds no checkpoints and no dumps, only what a reader and a verifier need:

    provenance.json    config (whole, and its digest), git commit, training code version,
                       packages, threads, kernels, device, CPU model and ISA flags, date, and
                       which studies are complete
    runs.csv           one row per training job: identity, segment, status, updates, wall time
    checkpoints.csv    one row per checkpoint: identity, segment, update, status, digest
    summary/, tables/  every finished study's summary and per-seed table
    comparisons/       each pair's per-checkpoint comparison table, with its provenance (the
                       results/full/runs/ layout)
    probes/            each main seed's probe table, with its provenance
    lr_search/         each trace of the stability search (results/full/activation/lr_search/)
    figures/           every figure (PNG; PDF too when small)

A study counts as complete when its summary exists; the exporter copies what is there and
lists the rest as pending, so a partial reference is always labelled as such. Runs the folder
already holds and the tree lacks are kept, with the export they came from
(``accumulate``), and so are the pair results (comparisons, probes, search traces)
that read only checkpoints it lists and that this code would make again
(``pair_results``, which also restores them into a tree). A study the folder holds
complete and the tree did not build is carried over (its summary, tables and figures,
``workflow.registry``, ``studies``) while its config and its pair results are unchanged;
``--reopen`` makes it pending instead, and ``--replace`` starts the folder afresh.

One job per module: ``tables`` (the run and checkpoint tables, from the job logs), ``digests``
(what identifies a config, its training slice and the code), ``accumulate`` (runs carried over
from earlier exports), ``pair_results`` (pair results carried over, and restored into a tree),
``studies`` (which studies are built, held and carried), ``export`` (writing the folder),
``verify`` (retrained digests against the folder's) and ``__main__`` (the command line).
"""
