"""Flavor-specific operations used by probes, so each probe is written once for both flavors.

A probe speaks in numpy arrays; a backend turns them into the flavor's native arrays, reads
results back, and measures what only that library can see (data pointers, allocations, matmul
work). These run inside the child, next to candidate code.
"""

from __future__ import annotations

import tracemalloc
from collections.abc import Callable
from typing import Any, Protocol

import numpy as np


class CandidateFault(Exception):
    """The candidate's code returned something a probe cannot work with; the text says what."""


class Backend(Protocol):
    name: str

    def native(self, a: np.ndarray) -> Any: ...
    def is_native(self, x: Any) -> bool: ...
    def to_numpy(self, x: Any, what: str = "the result") -> np.ndarray: ...
    def nan_buffer(self, shape: tuple[int, ...], dtype: str, contiguous: bool = True) -> Any: ...
    def address(self, x: Any) -> int: ...
    def strides(self, x: Any) -> tuple[int, ...]: ...
    def shares_memory(self, a: Any, b: Any) -> bool: ...
    def dtype_name(self, x: Any) -> str: ...
    def device_name(self, x: Any) -> str: ...
    def count_matmul_flops(self, fn: Callable[..., Any], *args: Any) -> tuple[Any, int]: ...
    def from_tensor(self, t: Any) -> Any: ...
    def to_tensor(self, x: Any, what: str = "the result") -> Any: ...
    def extra_memory(self, fn: Callable[..., Any], *args: Any) -> tuple[Any, int]: ...
    def warm_up(self) -> None: ...


def _describe_type(x: Any) -> str:
    return type(x).__module__.split(".")[0] + "." + type(x).__qualname__


class NumpyBackend:
    name = "numpy"

    def native(self, a: np.ndarray) -> np.ndarray:
        return np.array(a, copy=True)

    def is_native(self, x: Any) -> bool:
        return isinstance(x, np.ndarray)

    def to_numpy(self, x: Any, what: str = "the result") -> np.ndarray:
        if not isinstance(x, np.ndarray):
            raise CandidateFault(f"{what} is a {_describe_type(x)}; expected a numpy.ndarray")
        return np.array(x, copy=True)

    def nan_buffer(self, shape: tuple[int, ...], dtype: str, contiguous: bool = True) -> Any:
        if contiguous:
            return np.full(shape, np.nan, dtype=dtype)
        n, d, e = shape
        return np.full((d, e, n), np.nan, dtype=dtype).transpose(2, 0, 1)

    def address(self, x: Any) -> int:
        return int(x.__array_interface__["data"][0])

    def strides(self, x: Any) -> tuple[int, ...]:
        return tuple(int(s) // x.itemsize for s in x.strides)

    def shares_memory(self, a: Any, b: Any) -> bool:
        return bool(np.shares_memory(a, b))

    def dtype_name(self, x: Any) -> str:
        return str(x.dtype)

    def device_name(self, x: Any) -> str:
        return "cpu"

    def count_matmul_flops(self, fn: Callable[..., Any], *args: Any) -> tuple[Any, int]:
        """Wrap the array arguments so every matmul / dot on them (and on what they produce)
        is counted; a candidate that strips the wrapper (np.asarray) is counted as zero."""
        _FlopCountingArray.flops = 0
        wrapped = [a.view(_FlopCountingArray) if isinstance(a, np.ndarray) else a for a in args]
        result = fn(*wrapped)
        if isinstance(result, _FlopCountingArray):
            result = result.view(np.ndarray)
        return result, _FlopCountingArray.flops

    def from_tensor(self, t: Any) -> np.ndarray:
        """A torch tensor (inside an autograd.Function) as this flavor's array."""
        return t.detach().cpu().numpy().copy()

    def to_tensor(self, x: Any, what: str = "the result") -> Any:
        import torch

        return torch.from_numpy(self.to_numpy(x, what))

    def extra_memory(self, fn: Callable[..., Any], *args: Any) -> tuple[Any, int]:
        """Peak bytes allocated during the call (tracemalloc sees numpy's data buffers)."""
        tracemalloc.start()
        try:
            result = fn(*args)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        return result, int(peak)

    def warm_up(self) -> None:
        """Nothing to prepare: numpy's measurements cost the same every time."""


def _matmul_flops(a_shape: tuple[int, ...], b_shape: tuple[int, ...]) -> int:
    if len(a_shape) < 1 or len(b_shape) < 1:
        return 0
    m = a_shape[-2] if len(a_shape) > 1 else 1
    k = a_shape[-1]
    n = b_shape[-1] if len(b_shape) > 1 else 1
    batch = int(np.prod(np.broadcast_shapes(a_shape[:-2], b_shape[:-2]))) if (
        len(a_shape) > 2 or len(b_shape) > 2
    ) else 1
    return 2 * m * k * n * batch


class _FlopCountingArray(np.ndarray):
    """An ndarray that counts the multiply-adds of every matmul it takes part in."""

    flops = 0

    def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
        plain = [i.view(np.ndarray) if isinstance(i, _FlopCountingArray) else i for i in inputs]
        if "out" in kwargs:
            kwargs["out"] = tuple(
                o.view(np.ndarray) if isinstance(o, _FlopCountingArray) else o
                for o in kwargs["out"]
            )
        if ufunc is np.matmul and method == "__call__" and len(plain) == 2:
            _FlopCountingArray.flops += _matmul_flops(np.shape(plain[0]), np.shape(plain[1]))
        result = getattr(ufunc, method)(*plain, **kwargs)
        return _rewrap(result)

    def __array_function__(self, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
        if func is np.dot and len(args) >= 2:
            _FlopCountingArray.flops += _matmul_flops(np.shape(args[0]), np.shape(args[1]))
        plain_args = [a.view(np.ndarray) if isinstance(a, _FlopCountingArray) else a for a in args]
        if func in (np.dot, np.einsum, np.tensordot, np.linalg.multi_dot):
            return _rewrap(func(*plain_args, **kwargs))
        return super().__array_function__(func, types, args, kwargs)


def _rewrap(result: Any) -> Any:
    if isinstance(result, np.ndarray) and not isinstance(result, _FlopCountingArray):
        return result.view(_FlopCountingArray)
    if isinstance(result, tuple):
        return tuple(_rewrap(r) for r in result)
    return result


class TorchBackend:
    name = "torch"

    def __init__(self) -> None:
        import torch

        self.torch = torch

    def native(self, a: np.ndarray) -> Any:
        return self.torch.from_numpy(np.array(a, copy=True))

    def is_native(self, x: Any) -> bool:
        return isinstance(x, self.torch.Tensor)

    def to_numpy(self, x: Any, what: str = "the result") -> np.ndarray:
        if not isinstance(x, self.torch.Tensor):
            raise CandidateFault(f"{what} is a {_describe_type(x)}; expected a torch.Tensor")
        return x.detach().cpu().resolve_conj().resolve_neg().numpy().copy()

    def nan_buffer(self, shape: tuple[int, ...], dtype: str, contiguous: bool = True) -> Any:
        torch_dtype = getattr(self.torch, dtype)
        if contiguous:
            return self.torch.full(shape, float("nan"), dtype=torch_dtype)
        n, d, e = shape
        return self.torch.full((d, e, n), float("nan"), dtype=torch_dtype).permute(2, 0, 1)

    def address(self, x: Any) -> int:
        return int(x.data_ptr())

    def strides(self, x: Any) -> tuple[int, ...]:
        return tuple(int(s) for s in x.stride())

    def shares_memory(self, a: Any, b: Any) -> bool:
        if a.numel() == 0 or b.numel() == 0:
            return False
        return bool(a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr())

    def dtype_name(self, x: Any) -> str:
        return str(x.dtype).removeprefix("torch.")

    def device_name(self, x: Any) -> str:
        return str(x.device)

    def count_matmul_flops(self, fn: Callable[..., Any], *args: Any) -> tuple[Any, int]:
        from torch.utils.flop_counter import FlopCounterMode

        with FlopCounterMode(display=False) as counter:
            result = fn(*args)
        return result, int(counter.get_total_flops())

    def from_tensor(self, t: Any) -> Any:
        return t.detach()

    def to_tensor(self, x: Any, what: str = "the result") -> Any:
        if not isinstance(x, self.torch.Tensor):
            raise CandidateFault(f"{what} is a {_describe_type(x)}; expected a torch.Tensor")
        return x

    def extra_memory(self, fn: Callable[..., Any], *args: Any) -> tuple[Any, int]:
        """The largest single fresh allocation an aten op made during the call: a scratch copy
        of the stack shows up as one O(N*D^2) tensor, a per-step temporary as O(D^2)."""
        tracker = _allocation_tracker(self.torch)()
        with tracker:
            result = fn(*args)
        return result, tracker.largest

    def warm_up(self) -> None:
        """Use the allocation tracker and the flop counter once on a tiny input. torch's first
        dispatch mode costs about a second of lazy imports; the runner calls this in the worker
        before it forks, so every child inherits them instead of paying that second again."""
        square = self.torch.ones(2, 2)
        self.extra_memory(lambda x: x @ x, square)
        self.count_matmul_flops(lambda x: x @ x, square)


def _allocation_tracker(torch: Any) -> type:
    from torch.utils._python_dispatch import TorchDispatchMode
    from torch.utils._pytree import tree_flatten

    class AllocationTracker(TorchDispatchMode):
        def __init__(self) -> None:
            super().__init__()
            self.largest = 0

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
            out = func(*args, **(kwargs or {}))
            inputs = {
                t.untyped_storage().data_ptr()
                for t in tree_flatten((args, kwargs or {}))[0]
                if isinstance(t, torch.Tensor)
            }
            for t in tree_flatten(out)[0]:
                if isinstance(t, torch.Tensor) and t.untyped_storage().data_ptr() not in inputs:
                    self.largest = max(self.largest, int(t.untyped_storage().nbytes()))
            return out

    return AllocationTracker


def make_backend(flavor: str) -> Backend:
    return TorchBackend() if flavor == "torch" else NumpyBackend()
