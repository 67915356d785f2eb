"""Snakemake adapter: the selected learning rate of the activation study, and the search table."""

import pandas as pd

from workflow.artifacts import read_json, write_csv, write_json
from workflow.joblog import job_log
from workflow.studies import lr_search_table, select_rate

smk = snakemake  # noqa: F821 (injected by Snakemake)
candidates = smk.params.candidates

with job_log(smk.log[0]) as log:
    rows = [{"lr": v["lr"], **t} for v in map(read_json, smk.input.verdicts) for t in v["traces"]]
    traces = pd.DataFrame(
        rows, columns=["lr", "seed", "order", "finite", "diverged_at", "final_loss"]
    )
    if smk.params.pinned is not None:
        selected, how = float(smk.params.pinned), "pinned by config (no search run)"
    else:
        selected = select_rate(candidates, traces)
        how = "stability search" if selected is not None else "no candidate was stable"
    table = lr_search_table(candidates, traces, selected)
    write_csv(smk.output.table, table.merge(traces, on="lr", how="left"))
    write_json(smk.output.selection, {"lr": selected, "how": how})
    log(f"selected learning rate: {selected} ({how})\n{table.to_string(index=False)}")
