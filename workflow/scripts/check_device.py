"""Snakemake adapter: fail fast, naming training.device, when the device does not exist here."""

import sys

from workflow.artifacts import write_json
from workflow.device import check_device
from workflow.joblog import job_log

smk = snakemake  # noqa: F821 (injected by Snakemake)

with job_log(smk.log[0]) as log:
    try:
        found = check_device(smk.wildcards.device)
    except ValueError as error:
        # Also on the terminal (or the cluster job's log), not only in the rule's log.
        print(f"\n{error}\n", file=sys.__stderr__, flush=True)
        raise
    write_json(smk.output.report, found)
    log(f"training.device {found['device']} exists: {found['device_name']}")
