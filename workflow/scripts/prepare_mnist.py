"""Snakemake adapter: acquire MNIST from the first working source and save the verified copy."""

import tempfile
from pathlib import Path

from workflow.fetch import acquire
from workflow.joblog import job_log
from workflow.mnist import save_npz
from workflow.provenance import record

smk = snakemake  # noqa: F821 (injected by Snakemake)
cfg = smk.params.config["data"]

with job_log(smk.log[0]) as log, tempfile.TemporaryDirectory() as workdir:
    arrays, source = acquire(cfg["sources"], cfg["digests"], Path(workdir), log=log)
    log(f"verified MNIST from {source}")
    save_npz(
        arrays,
        Path(smk.output.npz),
        provenance=record(smk.params.config, smk.params.code, source=source),
    )
