# What made this results tree, for the report's landing section: the config's name and digest,
# the code version and the packages. Any config or code change rewrites it (and nothing else),
# except training.state_every, which changes no result and so reruns nothing anywhere.

DESCRIBED_CONFIG = sorted_keys(
    {**config, "training": {**config["training"], "state_every": None}}
)


rule describe_config:
    output:
        about=report(
            f"{RESULTS}/about.csv",
            caption="../workflow/report/about.rst",
            category="About this report",
        ),
    log:
        f"{LOGS}/describe_config.log",
    localrule: True
    conda:
        "../envs/histres.yaml"
    params:
        config=DESCRIBED_CONFIG,
        code=workflow_version(),
    script:
        adapter("describe_config")
