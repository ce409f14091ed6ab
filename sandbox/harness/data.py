"""What the check reads: the learner's variables as data, never live objects."""

from __future__ import annotations

import base64
import contextlib
import json
import sys
from typing import Any, cast

# --- what the check reads: the learner's variables as data ----------------------------------------
#
# The learner's process encodes its module globals as JSON (names starting with "_" and modules left
# out); the check's process decodes them into plain values. Nothing in the encoding can make the
# decoder run code: JSON, base64 and numbers, turned back into numbers, strings, containers, numpy
# arrays and torch tensors; a torch module becomes its class name and tensors (ModuleData), anything
# else its class name and repr (Opaque). So a check can never call the learner's code.

DATA_LIMIT = 32 * 1024**2
MAX_DEPTH = 20
MAX_INT_DIGITS = 4000
OPAQUE_TEXT = 200


class Encoder:
    def __init__(self, limit: int = DATA_LIMIT):
        self.left = limit

    def value(self, v, depth: int = 0):
        if depth > MAX_DEPTH or self.left <= 0:
            return self.opaque(v, "not kept: too deep or too large")
        self.left -= 8
        t = type(v)
        if v is None or t is bool or t is float:
            return v
        if t is int:
            return v if len(str(abs(v))) <= MAX_INT_DIGITS else self.opaque(v, "not kept: too many digits")
        if t is str:
            self.left -= len(v)
            return v if self.left > 0 else self.opaque(v, "not kept: too large")
        if t is bytes or t is bytearray:
            self.left -= len(v) * 4 // 3
            return {"$": "b", "v": base64.b64encode(bytes(v)).decode()} if self.left > 0 else self.opaque(v)
        if t is complex:
            return {"$": "c", "v": [v.real, v.imag]}
        if t is list:
            return [self.value(x, depth + 1) for x in v]
        if t is tuple:
            return {"$": "t", "v": [self.value(x, depth + 1) for x in v]}
        if t is set or t is frozenset:
            return {"$": "s", "v": [self.value(x, depth + 1) for x in v]}
        if t is dict:
            return {"$": "d", "v": [[self.value(k, depth + 1), self.value(x, depth + 1)] for k, x in v.items()]}
        torch = sys.modules.get("torch")
        if torch is not None and isinstance(v, torch.Tensor):
            return self.tensor(v)
        if torch is not None and isinstance(v, torch.nn.Module):
            params = [[name, self.tensor(p)] for name, p in v.named_parameters()]
            buffers = [[name, self.tensor(b)] for name, b in v.named_buffers()]
            return {"$": "M", "v": [type(v).__name__, bool(v.training), params, buffers]}
        numpy = sys.modules.get("numpy")
        if numpy is not None and isinstance(v, numpy.ndarray):
            return self.array(v)
        if numpy is not None and isinstance(v, numpy.generic):
            return self.value(v.item(), depth + 1)
        if isinstance(v, bool | int | float | str):  # subclasses (IntEnum, str enums): their plain value
            return self.value(_plain(v), depth + 1)
        return self.opaque(v)

    def array(self, a):
        if a.dtype.kind not in "biufc" or a.dtype.hasobject:
            return self.opaque(a)
        self.left -= a.nbytes * 4 // 3
        if self.left <= 0:
            return self.opaque(a, "not kept: too large")
        a = a.astype(a.dtype.newbyteorder("<"), copy=False) if a.dtype.byteorder == ">" else a
        return {"$": "a", "v": [a.dtype.str, list(a.shape), base64.b64encode(a.tobytes()).decode()]}

    def tensor(self, t):
        torch = sys.modules["torch"]
        try:
            t = t.detach()
            if t.layout != torch.strided or t.is_quantized:
                return self.opaque(t)
            t = t.cpu()
            name = str(t.dtype).removeprefix("torch.")
            try:
                a = t.contiguous().numpy()
            except (TypeError, RuntimeError):  # bfloat16 and other types numpy lacks
                a = t.to(torch.complex64 if t.is_complex() else torch.float32).contiguous().numpy()
        except Exception:
            return self.opaque(t)
        encoded = self.array(a)
        if encoded.get("$") != "a":
            return encoded
        return {"$": "T", "v": [name, *encoded["v"]]}

    def opaque(self, v, text: str | None = None):
        if text is None:
            try:
                text = repr(v)[:OPAQUE_TEXT]
            except Exception:
                text = "?"
        return {"$": "o", "v": [type(v).__name__, text]}


def _plain(v):
    for kind in (bool, int, float, str):
        if isinstance(v, kind):
            return kind(v)
    return v


def encode_namespace(ns: dict) -> bytes:
    encoder = Encoder()
    data = {}
    for name, value in list(ns.items()):
        if not isinstance(name, str) or name.startswith("_") or type(value).__name__ == "module":
            continue
        try:
            data[name] = encoder.value(value)
        except Exception:
            data[name] = encoder.opaque(value, "not kept: could not be read")
    return json.dumps(data).encode()


class ModuleData:
    """A learner's torch.nn.Module as a check sees it: its class name, mode and tensors. It cannot
    be called: the learner's code never runs in the check's process."""

    def __init__(self, type_name: str, training: bool, params: dict, buffers: dict):
        self.type_name = type_name
        self.training = training
        self._params = params
        self._buffers = buffers

    def named_parameters(self):
        return iter(list(self._params.items()))

    def parameters(self):
        return iter(list(self._params.values()))

    def named_buffers(self):
        return iter(list(self._buffers.items()))

    def state_dict(self) -> dict:
        return {**self._params, **self._buffers}

    def __repr__(self) -> str:
        return f"<{self.type_name} module: {len(self._params)} parameters>"


class Opaque:
    """A value a check cannot read (a function, a class, an open file...): its class name and its
    repr, cut."""

    def __init__(self, type_name: str, text: str):
        self.type_name = type_name
        self.text = text

    def __repr__(self) -> str:
        return self.text


def decode(obj):
    if isinstance(obj, list):
        return [decode(x) for x in obj]
    if not isinstance(obj, dict):
        return obj
    # The value's shape is the kind's: anything else raises here, and the check reads "unreadable".
    kind, v = obj.get("$"), cast(Any, obj.get("v"))
    if kind == "t":
        return tuple(decode(x) for x in v)
    if kind == "s":
        items = [decode(x) for x in v]
        try:
            return set(items)
        except TypeError:
            return items
    if kind == "d":
        out = {}
        for key, value in v:
            with contextlib.suppress(TypeError):
                out[decode(key)] = decode(value)
        return out
    if kind == "b":
        return base64.b64decode(v)
    if kind == "c":
        return complex(float(v[0]), float(v[1]))
    if kind == "a":
        return decode_array(*v)
    if kind == "T":
        import torch

        dtype = getattr(torch, str(v[0]), None)
        if not isinstance(dtype, torch.dtype):
            raise ValueError("not a torch dtype")
        return torch.from_numpy(decode_array(*v[1:])).to(dtype)
    if kind == "M":
        type_name, training, params, buffers = v
        return ModuleData(
            str(type_name),
            bool(training),
            {str(k): decode(t) for k, t in params},
            {str(k): decode(t) for k, t in buffers},
        )
    if kind == "o":
        return Opaque(str(v[0]), str(v[1]))
    raise ValueError(f"unknown value kind {kind!r}")


def decode_array(dtype_str, shape, data):
    import numpy

    dtype = numpy.dtype(str(dtype_str))
    if dtype.kind not in "biufc" or dtype.hasobject:
        raise ValueError("not a numeric dtype")
    shape = tuple(int(n) for n in shape)
    if any(n < 0 for n in shape):
        raise ValueError("negative size")
    return numpy.frombuffer(base64.b64decode(data), dtype=dtype).reshape(shape).copy()


def decode_namespace(data: bytes) -> dict:
    raw = json.loads(data.decode("utf-8"))
    if not isinstance(raw, dict):
        raise ValueError("not a namespace")
    return {str(name): decode(value) for name, value in raw.items()}
