from workflow.preflight import check_mnist_copy


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


# The copy is checked against data.digests here, while the workflow is parsed: a changed copy
# stops every invocation (dry runs too) before any job, so no training job deletes its outputs
# and then fails on the data. Its readers take it as an ancient() input, since its bytes are
# pinned by the digests, not by its time: a good copy fetched again retrains nothing.
check_mnist_copy(Path(rules.prepare_mnist.output.npz), config["data"]["digests"])
