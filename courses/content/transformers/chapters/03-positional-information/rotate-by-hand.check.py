import torch


def check(ns):
    q, positions, rotated = ns.get("q"), ns.get("positions"), ns.get("rotated")
    if not isinstance(q, torch.Tensor) or q.dim() != 2 or q.shape[1] % 2:
        return False, "Keep `q` as the starter code makes it: one row per position, an even number of columns."
    if not isinstance(positions, torch.Tensor) or tuple(positions.shape) != (q.shape[0],):
        return False, "Keep `positions`: one position number per row of `q`."
    if not isinstance(rotated, torch.Tensor) or rotated.shape != q.shape:
        return False, f"`rotated` should have the shape of `q`, {tuple(q.shape)}."
    if torch.isnan(rotated).any():
        return False, "`rotated` holds NaN. Build it only from the two coordinates of each pair and the angles."
    q, rotated = q.float(), rotated.float()
    n, d = q.shape
    # The expected result, from the learner's own q and positions, by complex multiplication.
    angles = positions.float()[:, None] * 10000 ** (-torch.arange(0, d, 2, dtype=torch.float32) / d)
    expected = torch.view_as_real(
        torch.view_as_complex(q.reshape(n, d // 2, 2).contiguous()) * torch.polar(torch.ones_like(angles), angles)
    ).reshape(n, d)
    if not torch.allclose(rotated[:, 0::2], expected[:, 0::2], atol=1e-5):
        return (
            False,
            "The even columns are no longer right. Keep the line that turns the first coordinate of each pair.",
        )
    if torch.allclose(rotated, expected, atol=1e-5):
        return True, (
            "Your rotation matches the complex product. Each pair keeps its length and turns by position times "
            "frequency, so a query and a key turned this way meet at an angle that depends only on their distance."
        )
    if torch.allclose(rotated[:, 1::2], q[:, 1::2], atol=1e-6):
        return False, "The odd columns are unchanged. A turned point moves in both coordinates: the second one too."
    angles_back = torch.polar(torch.ones_like(angles), -angles)
    backwards = torch.view_as_real(torch.view_as_complex(q.reshape(n, d // 2, 2).contiguous()) * angles_back)
    if torch.allclose(rotated[:, 1::2], backwards.reshape(n, d)[:, 1::2], atol=1e-5):
        return False, "The second coordinate turns the other way from the first. Check the sign of the sine term."
    return False, "The odd columns do not match a rotation. Both coordinates of a pair enter the new second coordinate."
