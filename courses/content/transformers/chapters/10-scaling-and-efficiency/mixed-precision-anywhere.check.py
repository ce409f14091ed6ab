import torch


def check(ns):
    device, kernels = ns.get("device"), ns.get("kernels")
    if device not in ("cpu", "cuda"):
        return False, 'Keep `device` as the starter code picks it: "cuda" when a GPU is there, "cpu" otherwise.'
    corner_a, corner_b, corner_mixed = ns.get("corner_a"), ns.get("corner_b"), ns.get("corner_mixed")
    tensors = (corner_a, corner_b, corner_mixed)
    if not all(isinstance(t, torch.Tensor) and t.dim() == 2 for t in tensors):
        return False, "Keep the three corners at the end of the code: `corner_a`, `corner_b` and `corner_mixed`."
    if corner_a.dtype != torch.float32 or corner_b.dtype != torch.float32:
        return False, "`a` and `b` should stay float32: autocast casts copies for each product, never the inputs."
    if corner_a.shape[1] != corner_b.shape[0] or corner_mixed.shape != (corner_a.shape[0], corner_b.shape[1]):
        return False, "Keep the corners as the starter code cuts them, so that corner_mixed is corner_a @ corner_b."
    if corner_a.double().std() < 0.5 or corner_b.double().std() < 0.5:
        return False, (
            "Keep `a` and `b` as the starter code draws them, random numbers of every size: on matrices of zeros or "
            "of a few round numbers, a product in any precision comes out the same."
        )
    if corner_mixed.dtype == torch.float32:
        return False, (
            "The autocast product is still float32, so autocast changed nothing. Making an autocast object is not "
            "enough: it only affects the operations that run while it is active. Is the product one of them?"
        )
    if corner_mixed.dtype != torch.bfloat16:
        return False, f"The autocast product is {corner_mixed.dtype}; this exercise asks for bfloat16."
    if not torch.isfinite(corner_mixed).all():
        return False, "The autocast product holds NaN or infinity. Multiply the float32 matrices a and b as they are."
    reference = corner_a @ corner_b  # float32, recomputed here
    error = ((corner_mixed.float() - reference).norm() / reference.norm()).item()
    # A product run in bfloat16 matches the rounded float32 one in about half of its entries; one
    # rounded afterwards matches in nearly all, even where the device added up in another order.
    if (corner_mixed == reference.to(torch.bfloat16)).double().mean() > 0.9:
        return False, (
            "This is the float32 product rounded to bfloat16 afterwards: the product itself still ran in float32. "
            "Let autocast run the product instead."
        )
    if error > 0.02:
        return False, f"The autocast product is {error:.1%} away from the float32 one: it should be a @ b, rounded."
    if not isinstance(kernels, list) or "MATH" not in kernels:
        return False, "Keep the loop that lists the attention kernels: `kernels` should name at least MATH."
    fused = [name for name in kernels if name != "MATH"]
    return True, (
        f"On {device} the product now runs in bfloat16: half the bytes per number and a relative error of "
        f"{error:.2%}, while a and b stay float32. Fused attention kernels here: {', '.join(fused) or 'none'}."
    )
