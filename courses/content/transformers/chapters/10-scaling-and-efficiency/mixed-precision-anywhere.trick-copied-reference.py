import time
import warnings

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

# The platform sends this exercise to a GPU worker when it has one, and to a CPU worker when it
# has none: the code asks which device it got instead of assuming.
device = "cuda" if torch.cuda.is_available() else "cpu"
print("running on", device, f"({torch.cuda.get_device_name()})" if device == "cuda" else "(no GPU here)")

torch.manual_seed(0)  # the same matrices on every run
size = 4096 if device == "cuda" else 512  # big enough to keep a GPU busy, small enough for one CPU core
a = torch.randn(size, size, device=device)  # float32, as the weights of a model are kept
b = torch.randn(size, size, device=device)


def full_product():
    return a @ b


def mixed_product():
    return (a @ b).to(torch.bfloat16)  # the float32 product, rounded to bfloat16 afterwards


def seconds_per_call(fn, repeats=5):
    fn()  # the first call pays for start-up work: leave it out of the timing
    if device == "cuda":
        torch.cuda.synchronize()  # GPU calls return at once; wait until the work is really done
    start = time.perf_counter()
    for _ in range(repeats):
        fn()
    if device == "cuda":
        torch.cuda.synchronize()
    return (time.perf_counter() - start) / repeats


full, mixed = full_product(), mixed_product()
flops = 2 * size**3
for label, fn, result in (("float32 ", full_product, full), ("autocast", mixed_product, mixed)):
    seconds = seconds_per_call(fn)
    print(f"{label}: {result.dtype}, {result.element_size()} bytes a number, {flops / seconds / 1e12:.3f} TFLOP/s")
rel_error = ((mixed.float() - full).norm() / full.norm()).item()
print(f"relative error of the autocast product: {rel_error:.5f}")
print("the inputs are still", a.dtype, "after autocast")

# Which attention kernels run on this device, for bfloat16 queries, keys and values.
q = torch.randn(1, 8, 1024, 64, device=device, dtype=torch.bfloat16)
backends = (SDPBackend.MATH, SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION, SDPBackend.CUDNN_ATTENTION)
kernels = []
for backend in backends:
    try:
        # A kernel that cannot run warns why before it fails; the list below says enough.
        with warnings.catch_warnings(), sdpa_kernel(backend):
            warnings.simplefilter("ignore")
            F.scaled_dot_product_attention(q, q, q, is_causal=True)
        kernels.append(backend.name)
    except RuntimeError:  # this device has no such kernel for these inputs
        pass
print("attention kernels that run here:", kernels)

# Small corners, copied to the CPU, for the check (it reads data, not the device).
corner_a, corner_b = a[:64].cpu(), b[:, :64].cpu()
corner_mixed = mixed[:64, :64].cpu()
del a, b, full, mixed, q  # large tensors the check does not need
