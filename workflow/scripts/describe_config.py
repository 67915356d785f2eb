"""Snakemake adapter: the report's "about" table: which config (name and digest), which code
(the whole workflow package's version and the git commit, when there is one) and which packages
made this results tree."""

import pandas as pd

from workflow.artifacts import write_csv
from workflow.joblog import job_log
from workflow.provenance import REPO_ROOT, package_versions
from workflow.reference.digests import config_digest, git_commit

smk = snakemake  # noqa: F821 (injected by Snakemake)
with job_log(smk.log[0]) as log:
    rows = {
        "config": smk.config["name"],
        # state_every (how often a job saves its resumable state) changes no result.
        "config digest (SHA-256, training.state_every as null)": config_digest(smk.params.config),
        "code version (workflow package)": smk.params.code,
        "git commit when written": git_commit(REPO_ROOT),
        **package_versions(),
    }
    log(f"config {rows['config']}: {rows}")
    write_csv(smk.output.about, pd.DataFrame({"item": list(rows), "value": list(rows.values())}))
