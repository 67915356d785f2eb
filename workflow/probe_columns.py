"""The columns of the probe tables, apart from the code that fills them.

Training the probes needs torch (workflow.probes) and summarizing them needs the statistics
(workflow.studies); both name the columns from here, so neither imports the other and a change
to the statistics never retrains a probe.
"""

# One probe seed's result for a seed's pair at one budget.
PROBE_COLUMNS = [
    "budget",
    "probe_seed",
    "correct_ABC",
    "correct_BAC",
    "n_test",
    "acc_ABC",
    "acc_BAC",
    "diff_pp",
]
# The same, per seed, over a set of probe seeds.
PROBE_PER_SEED_COLUMNS = ["seed", "budget", "probe_seeds", "n_probe_seeds", *PROBE_COLUMNS[2:]]
