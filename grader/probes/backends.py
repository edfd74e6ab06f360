"""Flavor-specific operations used by probes, so each probe is written once for both flavors.

A probe speaks in numpy arrays; a backend turns them into the flavor's native arrays, reads
results back, and measures what only that library can see (data pointers, allocations, matmul
work). These run inside the child, next to candidate code.
"""

from __future__ import annotations

import tracemalloc
import weakref
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, Protocol

import numpy as np

FlopRule = Callable[[tuple[Any, ...], dict[str, Any]], int]
"""The flops of one call of a function that multiplies matrices, from its (args, kwargs)."""


class CandidateFault(Exception):
    """The candidate's code returned something a probe cannot work with; the text says what."""


class Backend(Protocol):
    name: str

    def native(self, a: np.ndarray) -> Any: ...
    def to_numpy(self, x: Any, what: str = "the result") -> np.ndarray: ...
    def nan_buffer(self, shape: tuple[int, ...], dtype: str, contiguous: bool = True) -> Any:
        """A NaN-filled output buffer; `contiguous=False` lays it out column-major (all strides
        reversed): the slots interleave and each is stored transposed, so neither the stack nor
        one slot can be reshaped into a view, and code that assumes a layout writes nowhere."""
        ...

    def address(self, x: Any) -> int: ...
    def strides(self, x: Any) -> tuple[int, ...]: ...
    def shares_memory(self, a: Any, b: Any) -> bool: ...
    def dtype_name(self, x: Any) -> str: ...
    def device_name(self, x: Any) -> str: ...
    def count_matmul_flops(self, fn: Callable[..., Any], *args: Any) -> tuple[Any, int]: ...
    def count_operations(self, fn: Callable[..., Any], *args: Any) -> tuple[Any, int]:
        """Every array operation the call makes on its arguments and on what they produce: a
        vectorised function makes as many at any batch size; a Python loop over the batch
        makes more as the batch grows."""
        ...

    def count_products(self, fn: Callable[..., Any], *args: Any) -> tuple[Any, int]:
        """The elements every elementwise multiplication of the call produces: the work of a
        scan of elementwise maps (however the multiplications are batched)."""
        ...

    def from_tensor(self, t: Any) -> Any: ...
    def to_tensor(self, x: Any, what: str = "the result") -> Any: ...
    def extra_memory(self, fn: Callable[..., Any], *args: Any) -> tuple[Any, int]: ...


def _real(array: np.ndarray, what: str) -> np.ndarray:
    """The array, unless it holds complex numbers: every comparison reads a result as float64,
    which would keep a complex number's real part alone and pass whatever its imaginary part
    holds."""
    if array.dtype.kind == "c":
        raise CandidateFault(f"{what} holds complex numbers ({array.dtype}); expected real ones")
    return array


def _describe_type(x: Any) -> str:
    return type(x).__module__.split(".")[0] + "." + type(x).__qualname__


class NumpyBackend:
    name = "numpy"

    def native(self, a: np.ndarray) -> np.ndarray:
        return np.array(a, copy=True)

    def to_numpy(self, x: Any, what: str = "the result") -> np.ndarray:
        """A copy of an array; a numpy scalar (what x.sum() returns) is a 0-d array."""
        if not isinstance(x, np.ndarray | np.generic):
            raise CandidateFault(f"{what} is a {_describe_type(x)}; expected a numpy.ndarray")
        return _real(np.array(x, copy=True), what)

    def nan_buffer(self, shape: tuple[int, ...], dtype: str, contiguous: bool = True) -> Any:
        return np.full(shape, np.nan, dtype=dtype, order="C" if contiguous else "F")

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
        return _counted(fn, args), _CountingArray.flops

    def count_operations(self, fn: Callable[..., Any], *args: Any) -> tuple[Any, int]:
        """Ufuncs, array functions and indexing (a loop indexes or iterates: both count), on the
        arguments, on what they produce and on the buffers the call makes (np.zeros ...)."""
        return _counted(fn, args, made=True), _CountingArray.operations

    def count_products(self, fn: Callable[..., Any], *args: Any) -> tuple[Any, int]:
        """np.multiply (`*`, `*=`) on a counting array: the elements of each result."""
        return _counted(fn, args, made=True), _CountingArray.products

    def from_tensor(self, t: Any) -> np.ndarray:
        """A torch tensor (inside an autograd.Function) as this flavor's array."""
        return np.array(t.detach().cpu().numpy())

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


def _counted(fn: Callable[..., Any], args: tuple[Any, ...], made: bool = False) -> Any:
    """Call fn with its array arguments wrapped so that every operation on them (and on what
    they produce) is counted, with the matmul / dot flops. np.asarray and friends would strip
    the wrapper, so while the call runs they keep it (this is a disposable child process);
    with `made`, buffers made from nothing (np.zeros, np.ones, np.empty, np.full) and the
    results of numpy's other functions (np.concatenate ...) count too."""
    _CountingArray.flops = _CountingArray.operations = _CountingArray.products = 0
    wrapped = [a.view(_CountingArray) if isinstance(a, np.ndarray) else a for a in args]
    with _keeping_subclass(made):
        result = fn(*wrapped)
    return np.ndarray.view(result, np.ndarray) if isinstance(result, _CountingArray) else result


@contextmanager
def _keeping_subclass(made: bool = False) -> Iterator[None]:
    """Make np.asarray / np.array / np.ascontiguousarray pass a counting array through (and,
    with `made`, np.zeros / ones / empty / full make one)."""
    originals = {name: getattr(np, name) for name in ("asarray", "array", "ascontiguousarray")}
    creators = {name: getattr(np, name) for name in (
        ("zeros", "ones", "empty", "full") if made else ())}

    def counting(name: str) -> Callable[..., Any]:
        original = creators[name]
        return lambda *args, **kwargs: original(*args, **kwargs).view(_CountingArray)

    def keep(name: str) -> Callable[..., Any]:
        original = originals[name]

        def converter(obj: Any, *args: Any, **kwargs: Any) -> Any:
            result = original(obj, *args, **kwargs)
            if isinstance(obj, _CountingArray) and not isinstance(result, _CountingArray):
                return result.view(_CountingArray)
            return result

        return converter

    for name in originals:
        setattr(np, name, keep(name))
    for name in creators:
        setattr(np, name, counting(name))
    _CountingArray.thorough = made
    try:
        yield
    finally:
        _CountingArray.thorough = False
        for name, original in {**originals, **creators}.items():
            setattr(np, name, original)


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


def _einsum_flops(equation: str, operands: Sequence[Any]) -> int:
    """2 x the product of every index size: the cost of the naive contraction."""
    inputs = equation.replace(" ", "").split("->")[0].split(",")
    sizes: dict[str, int] = {}
    for letters, operand in zip(inputs, operands, strict=False):
        for letter, size in zip(letters, getattr(operand, "shape", ()), strict=False):
            sizes[letter] = int(size)
    return 2 * int(np.prod(list(sizes.values()))) if sizes else 0


def _tensordot_flops(a_shape: tuple[int, ...], b_shape: tuple[int, ...], axes: Any) -> int:
    """2 x every entry of the result x the contracted size. `axes` as numpy's tensordot takes
    it (torch's `dims` alike): a count of a's trailing axes, or a pair of axis lists."""
    if isinstance(axes, int | np.integer):
        contracted = a_shape[len(a_shape) - int(axes):] if axes else ()
    else:
        first = axes[0]
        contracted = tuple(a_shape[int(i)] for i in (first if hasattr(first, "__len__")
                                                     else [first]))
    size = int(np.prod(contracted))
    return 2 * int(np.prod(a_shape)) * int(np.prod(b_shape)) // size if size else 0


def _chain_flops(shapes: Sequence[tuple[int, ...]]) -> int:
    """A chain of matmuls (multi_dot) in the naive order, left to right (the library may pick
    a cheaper one); a first operand that is a vector counts as one row."""
    if len(shapes) < 2:
        return 0
    rows = (1, *shapes[0]) if len(shapes[0]) == 1 else tuple(shapes[0])
    total = 0
    for shape in shapes[1:]:
        total += _matmul_flops(rows, shape)
        rows = (rows[0], shape[-1] if len(shape) > 1 else 1)
    return total


class _CountingArray(np.ndarray):
    """An ndarray that counts the operations it takes part in and the multiply-adds of every
    matmul among them."""

    flops = 0
    operations = 0
    products = 0
    thorough = False

    def __getitem__(self, key: Any) -> Any:
        _CountingArray.operations += 1
        return super().__getitem__(key)

    def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
        _CountingArray.operations += 1
        plain = [as_plain(i, _CountingArray) for i in inputs]
        if "out" in kwargs:
            kwargs["out"] = tuple(
                as_plain(o, _CountingArray)
                for o in kwargs["out"]
            )
        if ufunc is np.matmul and method == "__call__" and len(plain) == 2:
            _CountingArray.flops += _matmul_flops(np.shape(plain[0]), np.shape(plain[1]))
        result = getattr(ufunc, method)(*plain, **kwargs)
        if ufunc is np.multiply and method == "__call__":
            _CountingArray.products += int(np.size(result))
        return as_watched(result, _CountingArray)

    def dot(self, b: Any, out: Any = None) -> Any:
        """a.dot(b), which calls numpy's C code without dispatch, as the np.dot it is."""
        return np.dot(self, b, out=out)

    def view(self, *args: Any, **kwargs: Any) -> Any:
        """A view keeps counting: work done on `x.view(np.ndarray)` of an argument (a plain
        array, which the counter would not see) is counted as the argument's own."""
        made = super().view(*args, **kwargs)
        return np.ndarray.view(made, _CountingArray) \
            if isinstance(made, np.ndarray) and not isinstance(made, _CountingArray) else made

    def __array_function__(self, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
        _CountingArray.operations += 1
        flops = _NUMPY_CONTRACTIONS.get(func)
        if flops is None:
            # numpy's own code on the counting arrays: multi_dot's dots, say, are counted one by
            # one as they dispatch. Thorough counting (`made`) keeps watching what comes out
            # too: np.concatenate's result, say, which numpy hands back as a plain array.
            result = super().__array_function__(func, types, args, kwargs)
            return as_watched(result, _CountingArray) if _CountingArray.thorough else result
        _CountingArray.flops += flops(args, kwargs)
        # Called on plain arrays (nested in lists too), so the call cannot dispatch back here.
        return as_watched(func(*as_plain(args, _CountingArray),
                               **as_plain(kwargs, _CountingArray)), _CountingArray)


def as_plain(value: Any, cls: type[np.ndarray]) -> Any:
    """Arrays of the watching subclass `cls` as plain ndarrays, inside tuples, lists and dicts
    too: what numpy's own function is called on, so that it cannot dispatch back."""
    if isinstance(value, cls):
        return np.ndarray.view(value, np.ndarray)
    if isinstance(value, tuple | list):
        return type(value)(as_plain(v, cls) for v in value)
    if isinstance(value, dict):
        return {k: as_plain(v, cls) for k, v in value.items()}
    return value


def as_watched(result: Any, cls: type[np.ndarray]) -> Any:
    """A result (or a tuple of them) as arrays of the watching subclass `cls` again."""
    if isinstance(result, np.ndarray) and not isinstance(result, cls):
        return result.view(cls)
    if isinstance(result, tuple):
        return tuple(as_watched(r, cls) for r in result)
    return result


def _dot_flops(a: Any, b: Any) -> int:
    """np.dot contracts a's last axis with b's first (or second to last): a scalar operand
    makes it a plain multiply, no matmul."""
    a_shape, b_shape = np.shape(a), np.shape(b)
    return _tensordot_flops(a_shape, b_shape, 1) if a_shape and b_shape else 0


_NUMPY_CONTRACTIONS: dict[Any, FlopRule] = {
    np.dot: lambda args, kwargs: _dot_flops(args[0], args[1]),
    np.einsum: lambda args, kwargs: _einsum_flops(args[0], args[1:])
    if isinstance(args[0], str) else 0,
    np.tensordot: lambda args, kwargs: _tensordot_flops(
        np.shape(args[0]), np.shape(args[1]), args[2] if len(args) > 2 else kwargs.get("axes", 2)),
}
"""The numpy functions that multiply matrices and are not the matmul ufunc, with their flops;
each is called on plain arrays (np.linalg.multi_dot is not here: its dots are counted)."""


class TorchBackend:
    name = "torch"

    def __init__(self) -> None:
        import torch

        self.torch = torch

    def native(self, a: np.ndarray) -> Any:
        return self.torch.from_numpy(np.array(a, copy=True))

    def to_numpy(self, x: Any, what: str = "the result") -> np.ndarray:
        if not isinstance(x, self.torch.Tensor):
            raise CandidateFault(f"{what} is a {_describe_type(x)}; expected a torch.Tensor")
        return _real(x.detach().cpu().resolve_conj().resolve_neg().numpy().copy(), what)

    def nan_buffer(self, shape: tuple[int, ...], dtype: str, contiguous: bool = True) -> Any:
        torch_dtype = getattr(self.torch, dtype)
        if contiguous:
            return self.torch.full(shape, float("nan"), dtype=torch_dtype)
        reversed_dims = tuple(range(len(shape)))[::-1]
        return self.torch.full(shape[::-1], float("nan"), dtype=torch_dtype).permute(reversed_dims)

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

    def _watched(self, fn: Callable[..., Any], args: tuple[Any, ...]) -> tuple[Any, Any]:
        """(fn's result, the watcher that saw its torch calls): a TorchFunctionMode, which
        unlike a dispatch mode does not pull in torch._dynamo when entered (a second)."""
        watcher = _torch_watcher(self.torch)()
        with watcher:
            result = fn(*args)
        return result, watcher

    def count_matmul_flops(self, fn: Callable[..., Any], *args: Any) -> tuple[Any, int]:
        result, watcher = self._watched(fn, args)
        return result, watcher.flops

    def count_operations(self, fn: Callable[..., Any], *args: Any) -> tuple[Any, int]:
        """Every torch function and tensor method (indexing and iterating a tensor count)."""
        result, watcher = self._watched(fn, args)
        return result, watcher.operations

    def count_products(self, fn: Callable[..., Any], *args: Any) -> tuple[Any, int]:
        """torch.mul and its spellings (`*`, `*=`, addcmul): the elements of each result."""
        result, watcher = self._watched(fn, args)
        return result, watcher.products

    def from_tensor(self, t: Any) -> Any:
        return t.detach()

    def to_tensor(self, x: Any, what: str = "the result") -> Any:
        if not isinstance(x, self.torch.Tensor):
            raise CandidateFault(f"{what} is a {_describe_type(x)}; expected a torch.Tensor")
        return x

    def extra_memory(self, fn: Callable[..., Any], *args: Any) -> tuple[Any, int]:
        """Peak bytes of fresh tensor storage alive at once during the call: a scratch copy of
        the stack, or a list holding every product, adds up to O(N*D^2); a per-step temporary
        that dies once copied into P stays O(D^2)."""
        result, watcher = self._watched(fn, args)
        return result, watcher.peak


def _torch_contractions(torch: Any) -> dict[Any, FlopRule]:
    """The torch functions and tensor methods that multiply matrices, with their flops (from
    the operands' shapes: a TorchFunctionMode sees the call, not the kernels inside it)."""
    T = torch.Tensor

    def shapes(args: tuple[Any, ...]) -> list[tuple[int, ...]]:
        flat = args[0] if len(args) == 1 and isinstance(args[0], list | tuple) else args
        return [tuple(a.shape) for a in flat if isinstance(a, torch.Tensor)]

    def pair(first: int, second: int) -> FlopRule:
        def flops(args: tuple[Any, ...], kwargs: dict[str, Any]) -> int:
            found = shapes(args)
            return _matmul_flops(found[first], found[second]) if len(found) > max(
                first, second) else 0
        return flops

    def einsum(args: tuple[Any, ...], kwargs: dict[str, Any]) -> int:
        if not args or not isinstance(args[0], str):
            return 0
        operands = args[1] if len(args) == 2 and isinstance(args[1], list | tuple) else args[1:]
        return _einsum_flops(args[0], operands)

    def tensordot(args: tuple[Any, ...], kwargs: dict[str, Any]) -> int:
        found = shapes(args[:2])
        dims = args[2] if len(args) > 2 else kwargs.get("dims", 2)
        return _tensordot_flops(found[0], found[1], dims) if len(found) == 2 else 0

    table: dict[Any, FlopRule] = {
        torch.einsum: einsum, torch.tensordot: tensordot,
        torch.linalg.multi_dot: lambda args, kwargs: _chain_flops(shapes(args)),
        torch.chain_matmul: lambda args, kwargs: _chain_flops(shapes(args)),
        T.__rmatmul__: pair(1, 0),
    }
    for f in (torch.matmul, torch.linalg.matmul, torch.mm, torch.bmm, torch.mv, T.__matmul__,
              T.matmul, T.mm, T.bmm, T.mv):
        table[f] = pair(0, 1)
    for f in (torch.addmm, torch.baddbmm, T.addmm, T.baddbmm):
        table[f] = pair(1, 2)
    return table


def _torch_watcher(torch: Any) -> type:
    """A TorchFunctionMode that counts torch calls, their matmul flops and the peak of fresh
    storage alive."""
    from torch.overrides import TorchFunctionMode

    contractions = _torch_contractions(torch)
    T = torch.Tensor
    multiplications = {torch.mul, torch.multiply, torch.addcmul, T.__mul__, T.__rmul__,
                       T.__imul__, T.mul, T.mul_, T.multiply, T.multiply_, T.addcmul,
                       T.addcmul_}

    def tensors(value: Any) -> Iterator[Any]:
        """The tensors in a call's arguments or result (nested in tuples, lists and dicts): what
        torch's tree_flatten finds, at a fraction of its cost on every watched call."""
        if isinstance(value, torch.Tensor):
            yield value
        elif isinstance(value, tuple | list):
            for item in value:
                yield from tensors(item)
        elif isinstance(value, dict):
            for item in value.values():
                yield from tensors(item)

    class TorchCallWatcher(TorchFunctionMode):
        def __init__(self) -> None:
            super().__init__()
            self.flops = 0
            self.operations = 0
            self.products = 0
            self.live: dict[int, int] = {}
            self.total = 0
            self.peak = 0

        def _freed(self, address: int) -> None:
            self.total -= self.live.pop(address, 0)

        def _track(self, storage: Any) -> None:
            """Count a new storage until it is freed (a finalizer on its Python object, which
            lives exactly as long as the storage)."""
            address = storage.data_ptr()
            if address and address not in self.live:
                self.live[address] = int(storage.nbytes())
                self.total += self.live[address]
                weakref.finalize(storage, self._freed, address)

        def __torch_function__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
            kwargs = kwargs or {}
            self.operations += 1
            flops = contractions.get(func)
            if flops is not None:
                self.flops += flops(args, kwargs)
            out = func(*args, **kwargs)
            if func in multiplications and isinstance(out, torch.Tensor):
                self.products += int(out.numel())
            inputs = {plain(t).untyped_storage().data_ptr() for t in tensors((args, kwargs))}
            for t in tensors(out):
                if plain(t).untyped_storage().data_ptr() not in inputs:
                    self._track(plain(t).untyped_storage())
            self.peak = max(self.peak, self.total)
            return out

    return TorchCallWatcher


def plain(t: Any) -> Any:
    """The tensor itself, or the one a torch.func wrapper holds (vmap's batching, grad's
    tracking): a wrapper has no storage of its own to read."""
    import torch

    functorch = torch._C._functorch
    while functorch.is_functorch_wrapped_tensor(t):
        t = functorch.get_unwrapped(t)
    return t


def make_backend(flavor: str) -> Backend:
    return TorchBackend() if flavor == "torch" else NumpyBackend()
