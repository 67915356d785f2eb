# Local: compute nodes often have no route to the package index.
rule prepare_mnist:
    output:
        npz="resources/mnist.npz",
    log:
        "logs/prepare_mnist.log",
    localrule: True
    conda:
        "../envs/histres.yaml"
    params:
        config=slice_config("data.sources", "data.digests"),
        code=code("prepare_mnist"),
    script:
        adapter("prepare_mnist")
