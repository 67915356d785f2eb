# Preflight: does training.device exist where training runs? The config itself is checked
# while the workflow is parsed (rules/common.smk); the device is not, because on a cluster
# training runs on another node. So one cheap job checks it there, upstream of every job that
# trains on the device: a missing device fails that one job (with --keep-going too), and no
# training job starts, nor deletes the outputs of the runs it would replace. The CPU always
# exists, so only other devices are checked (device_checked in rules/common.smk). Not a
# localrule: it must land where training lands (same threads and memory; profiles/slurm gives
# it the training rules' settings, gpu included). A dry run of local execution checks the
# device at once (workflow.preflight), since the machine that plans is the one that trains.
rule check_device:
    input:
        device_here,
    output:
        report=f"{RESULTS}/preflight/device~{{device}}.json",
    log:
        f"{LOGS}/preflight/device~{{device}}.log",
    wildcard_constraints:
        device=r"cpu|cuda(:\d+)?|mps",
    conda:
        "../envs/histres.yaml"
    threads: config["training"]["torch_threads"]
    resources:
        mem_mb=4000,
    # No params, not even the code hash: the check decides no result, and rerunning it while
    # its report exists (after an edit of workflow/device.py, say) would make Snakemake 9.27
    # skip, for that invocation, every job below it that needs to run for its own reason.
    script:
        adapter("check_device")
