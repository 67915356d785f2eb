"""The layers the study compares, named once for every stage (torch-free).

The model (workflow.model) exposes its representations under these names, the dumps store
the hidden ones, the comparisons compute CKA for all of them, and the primary score H_repr
averages two of them.
"""

# Where CKA is measured, in network order.
LAYERS = ("conv1", "conv2", "fc1", "logits")
# The hidden layers: dumped for the probe images, and checked for dead units.
HIDDEN = LAYERS[:-1]
# The protocol's primary score names exactly these two layers.
H_REPR_LAYERS = ("conv2", "fc1")
