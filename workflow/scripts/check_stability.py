"""Snakemake adapter: did every short trace at one candidate learning rate stay finite?"""

from workflow.artifacts import read_json, write_json
from workflow.joblog import job_log

smk = snakemake  # noqa: F821 (injected by Snakemake)

with job_log(smk.log[0]) as log:
    traces = [read_json(path) for path in smk.input.traces]
    verdict = {
        "lr": float(smk.wildcards.lr),
        "all_finite": all(trace["finite"] for trace in traces),
        "traces": [
            {k: trace[k] for k in ("seed", "order", "finite", "diverged_at", "final_loss")}
            for trace in traces
        ],
    }
    write_json(smk.output.verdict, verdict)
    log(f"lr {verdict['lr']}: {sum(t['finite'] for t in traces)}/{len(traces)} traces finite")
