# histres: does training history stay in a network's representations after its behaviour
# has converged? The science is ../shared/protocol.md; every number of it is in config.yaml.


from snakemake.utils import min_version

min_version("9.0")


configfile: "config.yaml"


include: "rules/common.smk"
include: "rules/data.smk"
include: "rules/train.smk"
include: "rules/dump.smk"
include: "rules/compare.smk"
include: "rules/summarize.smk"


rule all:
    input:
        expand("results/summary/{study}.csv", study=STUDIES),
        expand("results/tables/{study}_per_seed.csv", study=STUDIES),
