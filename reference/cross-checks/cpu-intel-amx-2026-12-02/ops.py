"""SHA-256 prefixes of conv2's and fc1's forward and backward results on fixed random inputs, one
torch thread: which library's bits move with which instruction-set variable on this CPU.

    ATEN_CPU_CAPABILITY=avx2 ONEDNN_MAX_CPU_ISA=AVX2 python ops.py
"""

import hashlib

import torch

torch.set_num_threads(1)
torch.manual_seed(0)


def digest(tensor: torch.Tensor) -> str:
    return hashlib.sha256(tensor.detach().contiguous().numpy().tobytes()).hexdigest()[:10]


# conv2 runs in oneDNN (channels_last, as the engine runs it); fc1 in MKL's sgemm.
x = torch.randn(128, 32, 14, 14).to(memory_format=torch.channels_last).requires_grad_()
conv = torch.nn.Conv2d(32, 64, 3, padding=1).to(memory_format=torch.channels_last)
y = conv(x)
y.backward(torch.randn_like(y))
print("conv2", "fwd", digest(y), "bwd_data", digest(x.grad), "bwd_weights", digest(conv.weight.grad))
a = torch.randn(128, 3136, requires_grad=True)
linear = torch.nn.Linear(3136, 128)
z = linear(a)
z.backward(torch.randn_like(z))
print("fc1", "fwd", digest(z), "bwd_data", digest(a.grad), "bwd_weights", digest(linear.weight.grad))
