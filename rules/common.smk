# Helpers shared by the rules: validation, run identities, study -> run mapping, config slices.
import os
import sys
from functools import cache, partial
from pathlib import Path

from workflow.artifacts import read_json
from workflow.config import (
    DEFAULT_VARIANT,
    logs_root,
    results_root,
    validate_config,
)
from workflow.groups import main_group
from workflow.machine import check_machine
from workflow.preflight import device_dry_run
from workflow.identity import RunId, lr_text
from workflow import registry, slices
from workflow.slices import sorted_keys
from workflow.provenance import code_version, workflow_version

# Stops before any job, naming the offending key.
validate_config(config)

# Every job that computes sets up its machine itself, first thing (workflow.machine.enter_job:
# the code path of machine.cpu_isa, the MKL code of machine.mkl_cpu, torch's determinism), so
# parsing compiles, writes and exports nothing; it only refuses, before any job, an environment
# whose variables clash with machine.cpu_isa.
check_machine(config["machine"], os.environ)

# The default config (config.yaml, name `full`) writes to results/ and logs/, where its users'
# commands look (results/summary/main.csv); every other config to results/<name>/ and
# logs/<name>/, so the small and the full config live side by side (workflow.config). A rule's
# benchmark TSV sits beside its log.
RESULTS = results_root(config)
LOGS = logs_root(config)
STUDIES = config["studies"]
ACTIVATION = STUDIES["activation"]
SENSITIVITY = STUDIES["sensitivity"]
VARIANTS = [DEFAULT_VARIANT, *config["variants"]]

ORDERS = ["ABC", "BAC"]
SEGMENTS = {
    "base": config["training"]["checkpoints"],
    "extended": config["training"]["extended_checkpoints"],
}
# For the readers of base comparisons only: a new long-horizon checkpoint reruns none of them.
BASE_SEGMENT = {"base": SEGMENTS["base"]}
# A run's identity as a path; the results and the logs mirror it. The lr is written
# losslessly (workflow.identity.lr_text: 0.05 -> "0.05", 0.05000001 -> "0.05000001").
# The variant (`variants:` in the config) follows the protocol; the protocol as written is
# variant~default.
GROUP_ID = "runs/protocol~{protocol}/variant~{variant}/act~{act}/lr~{lr}/optim~{optim}/stream~{stream}"
RUN_ID = f"{GROUP_ID}/seed~{{seed}}/order~{{order}}"
GROUP = f"{RESULTS}/{GROUP_ID}"
RUN = f"{RESULTS}/{RUN_ID}"


def adapter(name):
    """Path of an adapter script, relative to the rules/ folder as `script:` wants it."""
    return f"../workflow/scripts/{name}.py"


def code(name):
    """Hash of the adapter and every workflow module it imports: edits there rerun the rule."""
    return code_version(Path(workflow.basedir) / "workflow" / "scripts" / f"{name}.py")


def device_checked():
    """The device check (rules/preflight.smk) as an input of a job that trains on
    training.device; call it from rules defined after rule check_device.

    The CPU always exists: no check, and the training rules' inputs stay what they were, so
    runs trained before the check existed are not rerun ("set of input files has changed").
    For any other device the check's report is an ancient() input: its time never makes a
    finished run outdated, so a rerun check (a new node, say) retrains nothing. If the report
    of a finished GPU tree is lost, build it alone first (snakemake results/preflight/...):
    a job that must run reruns everything below it unless the ancient file already exists.
    """
    device = config["training"]["device"]
    if device == "cpu":
        return []
    return ancient(expand(rules.check_device.output.report, device=device)[0])


def run_group(**changes):
    """The main protocol's run group, with the given identity fields changed; a variant's
    group takes its activation, rate and optimizer policy from the variant's config."""
    group = main_group(config, changes.get("variant", DEFAULT_VARIANT))
    return {**group, "lr": lr_text(group["lr"]), **changes}


def comparisons(runs, seeds, segment, against_stream=None, order=None, other=None):
    """Comparison CSVs: ABC vs BAC, or (``against_stream``) a run of ``order`` on that stream
    vs the stream-0 run of order ``other`` (the same order unless given)."""
    if against_stream is None:
        pattern = f"{GROUP}/seed~{{seed}}/ABC_vs_BAC/{{segment}}.csv"
        return expand(pattern, **runs, seed=seeds, segment=segment)
    pattern = f"{RUN}/vs_stream~0/order~{{other}}/{{segment}}.csv"
    return expand(
        pattern,
        **{**runs, "stream": against_stream},
        seed=seeds,
        order=order,
        other=other or order,
        segment=segment,
    )


def slice_config(*keys, drop=(), source=config):
    """The part of the config (or of ``source``, a variant's config) a job depends on: the
    named dotted keys, minus ``drop``."""
    return slices.slice_config(source, keys, drop)


STATISTICS = slice_config("statistics")


# What a dump depends on; the comparisons check that every dump they read was made with it.
DUMP_CONFIG = {variant: slices.dump_config(config, variant) for variant in VARIANTS}
# What a training job depends on (its variant's config), minus what its path sets.
TRAINING_CONFIG = {
    variant: slices.training_config(config, variant) for variant in VARIANTS
}


# Jobs run seed by seed, in the main study's seed order, a seed's stream-0 pair before its
# replicates; and a finished run's dumps, comparisons and probes go before any training. So
# the two runs of a pair finish together and their comparison follows at once: a session or a
# machine cut off loses only the pairs in flight, and every finished pair is a complete result
# the reference keeps (workflow.reference). Priorities stay positive: Snakemake's MILP
# scheduler maximises their sum, so a negative one would never be picked first.
SEED_ORDER = [
    *STUDIES["main"]["seeds"],
    *(s for s in STUDIES["noise_floor"]["seeds"] if s not in STUDIES["main"]["seeds"]),
]
MAX_STREAMS = 10
AFTER_TRAINING = 1 + MAX_STREAMS * (len(SEED_ORDER) + 1)


def training_priority(wildcards):
    seed, stream = int(wildcards.seed), int(getattr(wildcards, "stream", 0))
    rank = SEED_ORDER.index(seed) if seed in SEED_ORDER else len(SEED_ORDER)
    return 1 + MAX_STREAMS * (len(SEED_ORDER) - rank) + max(MAX_STREAMS - 1 - stream, 0)


def run_training_config(wildcards):
    """The training config of the run the wildcards name (its variant's)."""
    return TRAINING_CONFIG[wildcards.variant]


def dump_config(wildcards):
    return DUMP_CONFIG[wildcards.variant]


SUMMARY = f"{RESULTS}/summary/{{study}}.csv"
PER_SEED = f"{RESULTS}/tables/{{study}}_per_seed.csv"
# Each study's matched views (workflow.registry): by name, the runs and seeds of its pairs. The
# "pair views" are summarized by rule summarize_pairs; the others feed a study's own rule.
MATCH_VIEWS = {
    name: (run_group(**view.fixed), view.seeds)
    for name, view in registry.views(config).items()
}
PAIR_VIEWS = {
    name: MATCH_VIEWS[name]
    for name, view in registry.views(config).items()
    if view.summarized
}


def run_files(kind, updates, **fixed):
    """Checkpoints or dumps of one run segment; ``fixed`` pins wildcards of the pattern."""
    suffix = {"checkpoints": "npz", "dumps": "parquet"}[kind]
    pattern = f"{RUN}/{kind}/update~{{update}}.{suffix}"
    return lambda w: expand(pattern, **{**dict(w), **fixed}, update=updates)


def run_record(segment, **fixed):
    name = "run.json" if segment == "base" else "extension.json"
    return lambda w: expand(f"{RUN}/{name}", **{**dict(w), **fixed})


def run_identity(wildcards, **fixed):
    """What a run's artifacts record and their readers expect (workflow.identity.RunId)."""
    return RunId.from_wildcards(wildcards, **fixed).as_dict()


def view_comparisons(wildcards):
    runs, seeds = MATCH_VIEWS[wildcards.view]
    return comparisons(runs, seeds, "base")


def tried_candidates(wildcards):
    """Verdicts of the candidates tried so far: stop at the first stable one."""
    if ACTIVATION["lr"] is not None:
        return []
    verdicts = []
    for lr in sorted(ACTIVATION["candidates"], reverse=True):
        verdict = checkpoints.check_stability.get(lr=lr_text(lr)).output.verdict
        verdicts.append(verdict)
        if read_json(verdict)["all_finite"]:
            break
    return verdicts


def selected_lr():
    selection = checkpoints.select_learning_rate.get().output.selection
    return read_json(selection)["lr"]


def activation_comparisons(wildcards):
    lr = selected_lr()
    if lr is None:
        return {}
    return {
        f"{act}_{segment}": comparisons(
            run_group(act=act, lr=lr_text(lr)), ACTIVATION["seeds"], segment
        )
        for act in ("relu", "leaky_relu")
        for segment in SEGMENTS
    }


def activation_checkpoints(wildcards):
    lr = selected_lr()
    if lr is None:
        return []
    updates = [*SEGMENTS["base"], *SEGMENTS["extended"]]
    return expand(
        f"{RUN}/checkpoints/update~{{update}}.npz",
        **run_group(lr=lr_text(lr)) | {"act": ["relu", "leaky_relu"]},
        seed=ACTIVATION["seeds"],
        order=ORDERS,
        update=updates,
    )


def figure_rule_output(name):
    return multiext(f"{RESULTS}/figures/{name}", ".png", ".pdf")


def pair_comparisons(runs, seeds):
    return comparisons(runs, seeds, "base")


def stream0_run(wildcards):
    """The stream-0 run a replicate is compared with."""
    return {"stream": 0, "order": wildcards.other}


def first_run(wildcards):
    here = {"stream": int(wildcards.stream), "order": wildcards.order}
    return min(
        here, stream0_run(wildcards), key=lambda run: (run["order"], run["stream"])
    )


def second_run(wildcards):
    here = {"stream": int(wildcards.stream), "order": wildcards.order}
    return max(
        here, stream0_run(wildcards), key=lambda run: (run["order"], run["stream"])
    )


def noise_floor_pairs(seeds=STUDIES["noise_floor"]["seeds"]):
    """A seed's four runs (ABC, BAC on stream 0 and on the replicate stream, marked r) give
    four order pairs and two same-order pairs; each pair's comparisons, by pair name."""
    replicate = STUDIES["noise_floor"]["stream"]
    on_replicate = partial(
        comparisons, run_group(), seeds, "base", against_stream=replicate
    )
    return {
        "ABC_BAC": comparisons(run_group(), seeds, "base"),
        "ABCr_BACr": comparisons(run_group(stream=replicate), seeds, "base"),
        "ABC_BACr": on_replicate(order="BAC", other="ABC"),
        "ABCr_BAC": on_replicate(order="ABC", other="BAC"),
        "ABC_ABCr": on_replicate(order="ABC"),
        "BAC_BACr": on_replicate(order="BAC"),
    }


# The trajectories of the order effect against the noise floor (rules/summarize.smk, their
# figures in rules/figures.smk): by table name, the matched view whose seeds and matches they read.
TRAJECTORIES = registry.trajectories()


# A dry run of local execution checks training.device at once (rules/preflight.smk,
# workflow.preflight), since the machine that plans is the one that trains.
@cache
def _device_in_dry_run(device):
    # Snakemake marks every executor that is not local with use_threads (snakemake.api), and
    # hands a dry run the dry-run executor, not the one planned for.
    local = not workflow.execution_settings.use_threads
    print(
        device_dry_run(device, local, sys.executable, Path(workflow.basedir)),
        file=sys.stderr,
    )


def device_here(wildcards):
    """No input: in a dry run, the device check itself (PreflightError where it fails)."""
    if workflow.dryrun:
        _device_in_dry_run(wildcards.device)
    return []
