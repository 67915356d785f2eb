# Verification against reference/<config name>/: retrain the named runs in fresh processes and
# compare every checkpoint digest with the reference's (`make verify SEEDS=101`).

from workflow.machine import job_identity
from workflow.provenance import package_versions
from workflow.reference.digests import training_config
from workflow.reference.verify import verification_inputs

REFERENCE = f"reference/{config['name']}"
VERIFIED_RUN = f"{RESULTS}/verify/{RUN_ID}/through~{{through}}"
# A rerun trains straight through these segments (see workflow/scripts/verify_run.py).
TRAINED_THROUGH = {"base": ["base"], "extended": ["base", "extended"]}


rule verify_run:
    input:
        mnist=ancient(rules.prepare_mnist.output.npz),
        # training.device exists here (rules/preflight.smk)
        device=device_checked(),
    output:
        digests=f"{VERIFIED_RUN}.csv",
        environment=f"{VERIFIED_RUN}.json",
    log:
        f"{LOGS}/verify/{RUN_ID}/through~{{through}}.log",
    benchmark:
        f"{LOGS}/verify/{RUN_ID}/through~{{through}}.benchmark.tsv"
    wildcard_constraints:
        through="base|extended",
    conda:
        "../envs/histres.yaml"
    threads: config["training"]["torch_threads"]
    resources:
        mem_mb=4000,
    params:
        config=run_training_config,
        updates=lambda w: {s: SEGMENTS[s] for s in TRAINED_THROUGH[w.through]},
        # A new torch or numpy can change the bits: retrain rather than reuse an old rerun.
        packages=package_versions(("torch", "numpy")),
        # So does another CPU, a variable that caps its instruction set, or MKL's code.
        machine=job_identity(config["machine"]),
        mkl_cpu=config["machine"]["mkl_cpu"],
        code=code("verify_run"),
    script:
        adapter("verify_run")


rule verify_reference:
    input:
        # Reads the reference's checkpoint table to know which runs to retrain.
        unpack(
            lambda w: verification_inputs(
                REFERENCE, config, w.scope, w.seeds, VERIFIED_RUN
            )
        ),
    output:
        table=f"{RESULTS}/verify/{{scope}}/seeds~{{seeds}}.csv",
        report=f"{RESULTS}/verify/{{scope}}/seeds~{{seeds}}.txt",
    log:
        f"{LOGS}/verify/{{scope}}/seeds~{{seeds}}.log",
    wildcard_constraints:
        scope="main|all",
        seeds=r"\d+(,\d+)*",
    localrule: True
    conda:
        "../envs/histres.yaml"
    params:
        reference=REFERENCE,
        # What the checkpoints' bits depend on; the reference must have been trained with it.
        config=sorted_keys(training_config(config)),
        code=code("verify_reference"),
    script:
        adapter("verify_reference")
