# histres: does training history stay in a network's representations after its behaviour
# has converged? The protocol is in docs/protocol.md; every number of it is in config.yaml.


from snakemake.utils import min_version

from workflow import registry

min_version("9.0")


configfile: "config.yaml"


report: "workflow/report/workflow.rst"


include: "rules/common.smk"


wildcard_constraints:
    protocol="class_split|rotated",
    variant="|".join(VARIANTS),
    act="relu|leaky_relu",
    lr=r"[0-9.e+-]+",
    optim="reset|preserve",
    stream=r"\d+",
    seed=r"\d+",
    order="ABC|BAC",
    other="ABC|BAC",
    view="|".join(MATCH_VIEWS),


include: "rules/data.smk"
include: "rules/preflight.smk"
include: "rules/train.smk"
include: "rules/dump.smk"
include: "rules/compare.smk"
include: "rules/summarize.smk"
include: "rules/activation.smk"
include: "rules/probes.smk"
include: "rules/sensitivity.smk"
include: "rules/figures.smk"
include: "rules/audit.smk"
include: "rules/verify.smk"
include: "rules/describe.smk"


SUMMARIES = list(registry.NAMES)


rule all:
    input:
        expand(f"{RESULTS}/summary/{{study}}.csv", study=SUMMARIES),
        [f"{RESULTS}/tables/{t}" for s in registry.STUDIES for t in s.named_tables()],
        expand(f"{RESULTS}/figures/{{name}}.{{ext}}", name=FIGURES, ext=["png", "pdf"]),
        f"{RESULTS}/audit/determinism.csv",
        rules.describe_config.output.about,


# A target per study: its summary, tables and figures (`make full` builds them study by study).
for study in SUMMARIES:

    rule:
        name:
            f"build_{study}"
        input:
            f"{RESULTS}/summary/{study}.csv",
            [f"{RESULTS}/tables/{t}" for t in registry.BY_NAME[study].named_tables()],
            [figure_rule_output(name) for name in STUDY_FIGURES[study]],
        localrule: True
