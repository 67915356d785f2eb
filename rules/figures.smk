# One rule per figure; each is a target of its own:
#   snakemake --cores 2 results/figures/<name>.pdf   (another config: results/<name>/figures/)
# All share one torch-free adapter that dispatches on the figure's name.


FIGURE_INPUTS = {
    "main_h_repr": {
        "comparisons": pair_comparisons(run_group(), STUDIES["main"]["seeds"])
    },
    "main_behaviour": {
        "comparisons": pair_comparisons(run_group(), STUDIES["main"]["seeds"])
    },
    "main_layer_cka": {"per_seed": expand(PER_SEED, study="main")},
    "long_horizon": {
        "comparisons": [
            *comparisons(run_group(), STUDIES["long"]["seeds"], "base"),
            *comparisons(run_group(), STUDIES["long"]["seeds"], "extended"),
        ]
    },
    "probe_differences": {"per_seed": rules.summarize_probes.output.per_seed},
    "lr_search": {"table": rules.select_learning_rate.output.table},
    "rotated_vs_split": {
        "split": expand(PER_SEED, study="main"),
        "rotated": expand(PER_SEED, study="rotated"),
    },
    "noise_floor": {"per_seed": rules.summarize_noise_floor.output.per_seed},
    "sensitivity": {"summary": rules.summarize_sensitivity.output.summary},
    **{
        name: {
            "per_seed": f"{RESULTS}/tables/{name}_per_seed.csv",
            "matches": f"{RESULTS}/{view}/matches.csv",
        }
        for name, view in TRAJECTORIES.items()
    },
}

# Each figure's params hold only what it draws from, so that a setting reruns only the
# figures that use it (the TOST margin only the probe figure, the default matching rule, which
# names the matching arms, only the sensitivity figure, the long-horizon checkpoints only the
# figures of the extended segment).
STATISTICS = {"statistics": config["statistics"]}
FIGURE_PARAMS = {
    "main_h_repr": (STATISTICS, BASE_SEGMENT),
    "main_behaviour": (STATISTICS, BASE_SEGMENT),
    "main_layer_cka": (STATISTICS, {}),
    "long_horizon": (STATISTICS, SEGMENTS),
    "probe_differences": (
        {**STATISTICS, "margin_pp": config["studies"]["probes"]["tost_margin_pp"]},
        {},
    ),
    "lr_search": ({}, {}),
    "rotated_vs_split": (STATISTICS, {}),
    "noise_floor": (STATISTICS, {}),
    "sensitivity": ({**STATISTICS, "matching": config["matching"]}, {}),
    "order_vs_noise": (STATISTICS, {}),
    "noise_floor_trajectory": (STATISTICS, {}),
}

for name, inputs in FIGURE_INPUTS.items():

    rule:
        name:
            f"plot_{name}"
        input:
            **inputs,
        output:
            report(
                figure_rule_output(name),
                caption=f"../workflow/report/figure_{name}.rst",
                category="Figures",
            ),
        log:
            f"{LOGS}/figures/{name}.log",
        localrule: True
        conda:
            "../envs/histres.yaml"
        params:
            figure=name,
            config=sorted_keys(FIGURE_PARAMS[name][0]),
            segments=FIGURE_PARAMS[name][1],
            code=code("plot_figure"),
        script:
            adapter("plot_figure")


rule plot_activation:
    input:
        unpack(activation_comparisons),
        selection=rules.select_learning_rate.output.selection,
    output:
        report(
            figure_rule_output("activation"),
            caption="../workflow/report/figure_activation.rst",
            category="Figures",
        ),
    log:
        f"{LOGS}/figures/activation.log",
    localrule: True
    conda:
        "../envs/histres.yaml"
    params:
        figure="activation",
        config=sorted_keys(STATISTICS),
        segments=SEGMENTS,
        code=code("plot_figure"),
    script:
        adapter("plot_figure")


FIGURES = [*FIGURE_INPUTS, "activation"]

# Each study's figures (workflow.registry), built with its summary by its target rule
# (`snakemake build_<study>`).
STUDY_FIGURES = {study.name: list(study.figures) for study in registry.STUDIES}
if sorted(sum(STUDY_FIGURES.values(), [])) != sorted(FIGURES):
    raise ValueError("rules/figures.smk: STUDY_FIGURES must name every figure once")
