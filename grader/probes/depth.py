"""The longest chain of dependent matrix products behind a result: what tells a parallel scan
(O(log N) levels of independent products) from a sequential loop in disguise (N - 1 products,
each waiting for the one before).

With the unit "element" (a scan of elementwise affine maps, say) every element is a slot of its
own and an elementwise multiplication is a product too: the chain is then that of dependent
multiplications, element by element (an elementwise ufunc in numpy keeps each element's own
depth; any other operation passes on the largest depth among its inputs).

Depth is tracked per matrix slot: a tensor of shape (..., D, D) holds one matrix per index of
its leading dims, and each slot of each buffer carries the depth of the product last written
there (0 for an input). A product's slot depth is the larger of its operands' plus one; any other
operation passes on the largest depth among its inputs. Slots are found by their offset in the
buffer, so views (slices, transposes) read and writes through views (P[i] = ..., out=, copy_)
land where they belong, and a scan updating one buffer in place from the top down is measured
as the scan it is.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from grader.probes.backends import as_plain, as_watched

_FULL, _ZEROS = np.full, np.zeros
"""numpy's own, bound before numpy_depth can stand in for them (its bookkeeping uses them)."""

UNITS = {"matrix": 2, "element": 0}
"""What a slot is, by the number of trailing axes it spans: a matrix, or one element."""


def batch_shape(shape: tuple[int, ...], core: int) -> tuple[int, ...]:
    """The leading axes of `shape` that index slots (all of them for elements)."""
    return shape[:len(shape) - core] if len(shape) >= core else ()


class SlotDepths:
    """Depth per (buffer, element offset of a slot): a matrix (core 2) or an element (core 0).

    `escaped`: numbers left the watched arrays while the block ran (`.tolist()`, `.item()`,
    `.numpy()`, `float(x)`): what was computed on them afterwards, in Python or in arrays made
    anew from them, is out of sight, so no depth measured then says anything."""

    def __init__(self, core: int = 2) -> None:
        self.table: dict[int, dict[int, int]] = {}
        self.core = core
        self.escaped = False

    def offsets(self, offset: int, shape: tuple[int, ...], strides: tuple[int, ...]) -> np.ndarray:
        """The element offsets of a view's slots, shaped like its slot axes."""
        batch = batch_shape(shape, self.core)
        grid = _FULL(batch, offset, dtype=np.int64)
        for axis, (size, stride) in enumerate(zip(batch, strides, strict=False)):
            step = np.arange(size, dtype=np.int64) * stride
            grid = grid + step.reshape((1,) * axis + (size,) + (1,) * (len(batch) - axis - 1))
        return grid

    def read(self, key: int, offsets: np.ndarray) -> np.ndarray:
        slots = self.table.get(key)
        if not slots or not offsets.size:
            return _ZEROS(offsets.shape, dtype=np.int64)
        get = slots.get
        return np.fromiter((get(o, 0) for o in offsets.ravel().tolist()), dtype=np.int64,
                           count=offsets.size).reshape(offsets.shape)

    def write(self, key: int, offsets: np.ndarray, depths: Any) -> None:
        """Slot by slot in order: where a write names one slot twice, the later depth stays."""
        values = np.broadcast_to(np.asarray(depths, dtype=np.int64), offsets.shape)
        self.table.setdefault(key, {}).update(
            zip(offsets.ravel().tolist(), values.ravel().tolist(), strict=True))

    def forget(self, key: int) -> None:
        self.table.pop(key, None)


def _broadcast_max(*depths: np.ndarray) -> np.ndarray:
    try:
        return np.maximum.reduce(np.broadcast_arrays(*depths)) if depths else _ZEROS(())
    except ValueError:  # batch shapes that do not broadcast: the largest depth for all
        return np.asarray(max(int(d.max(initial=0)) for d in depths))


def _overall(depths: list[np.ndarray]) -> int:
    return max((int(d.max(initial=0)) for d in depths), default=0)


def _fit(depths: Any, shape: tuple[int, ...]) -> Any:
    """Depths for slots of `shape`: as they are where they broadcast to it, else the largest."""
    try:
        np.broadcast_shapes(np.shape(depths), shape)
    except ValueError:
        return _overall([np.asarray(depths)])
    return depths if len(np.shape(depths)) <= len(shape) else _overall([np.asarray(depths)])


# --- torch --------------------------------------------------------------------------------------


def _torch_mode(torch: Any, core: int) -> type:
    from torch.overrides import TorchFunctionMode
    from torch.utils._pytree import tree_flatten

    T = torch.Tensor
    products = {torch.matmul, torch.mm, torch.bmm, torch.einsum, T.__matmul__, T.matmul,
                T.mm, T.bmm, torch.linalg.matmul, torch.linalg.multi_dot, torch.chain_matmul}
    if core == 0:
        products |= {torch.mul, torch.multiply, torch.addcmul, T.__mul__, T.__rmul__,
                     T.__imul__, T.mul, T.mul_, T.multiply, T.multiply_, T.addcmul,
                     T.addcmul_}
    reversed_products = {T.__rmatmul__}
    escapes = {T.numpy, T.tolist, T.item, T.__array__, T.__float__, T.__int__, T.__complex__}
    # Numbers coming back in from outside the tensors: whatever way they left (an escape
    # above, a dlpack capsule, the storage's bytes), what was done to them out there is unseen.
    from_data = {torch.tensor, torch.as_tensor, torch.asarray, T.new_tensor}
    with_bias = {torch.addmm, torch.baddbmm, T.addmm, T.baddbmm, T.addmm_, T.baddbmm_}
    writes = {T.__setitem__, T.copy_}

    class DepthMode(TorchFunctionMode):
        def __init__(self) -> None:
            super().__init__()
            self.depths = SlotDepths(core)
            self._watched: set[int] = set()

        def _where(self, t: Any) -> tuple[int, np.ndarray]:
            storage = t.untyped_storage()
            key = storage.data_ptr()
            if key not in self._watched:
                self._watched.add(key)
                weakref.finalize(storage, self._release, key)
            return key, self.depths.offsets(t.storage_offset(), tuple(t.shape), tuple(t.stride()))

        def _release(self, key: int) -> None:
            self._watched.discard(key)
            self.depths.forget(key)

        def depth(self, t: Any) -> np.ndarray:
            return self.depths.read(*self._where(t))

        def _record(self, t: Any, depths: Any) -> None:
            self.depths.write(*self._where(t), depths)

        def _write_elements(self, t: Any, index: Any, source: Any) -> None:
            """t[index] = source, element by element: the same index on the grid of t's
            offsets finds the elements written (advanced indexing, a copy, included)."""
            if not t.numel():
                return
            key, grid = self._where(t)
            targets = np.asarray(grid[_numpy_index(torch, index)])
            depth = self.depth(source) if isinstance(source, torch.Tensor) and source.numel() \
                else _ZEROS(())
            if targets.size:
                self.depths.write(key, targets, _fit(depth, targets.shape))

        def __torch_function__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
            kwargs = kwargs or {}
            if func in escapes and args and isinstance(args[0], torch.Tensor) \
                    and (args[0].is_floating_point() or args[0].is_complex()):
                self.depths.escaped = True
            data = args[1] if func is T.new_tensor and len(args) > 1 else \
                args[0] if func in from_data and args else None
            if _outside_numbers(data):
                self.depths.escaped = True
            tensors = [a for a in tree_flatten((args, kwargs))[0] if isinstance(a, torch.Tensor)]
            ins = [self.depth(t) for t in tensors if t.numel()]
            out = func(*args, **kwargs)
            if func in writes and len(args) >= 2 and core == 0 and func is T.__setitem__:
                self._write_elements(args[0], args[1], args[2])
                return out
            if func in writes and len(args) >= 2:
                target = args[0][args[1]] if func is T.__setitem__ else args[0]
                source = args[2] if func is T.__setitem__ else args[1]
                if isinstance(source, torch.Tensor) and target.numel():
                    self._record(target, _overall([self.depth(source)]) if source.ndim < core
                                 else _fit(self.depth(source), batch_shape(
                                     tuple(target.shape), core)))
                return out
            if func in products or func in reversed_products or func in with_bias:
                operands = [self.depth(t) for t in tensors[:3] if t.numel()]
                step = _broadcast_max(*operands) + 1 if operands else np.asarray(1)
            else:
                step = np.asarray(_overall(ins))
            inputs = {t.untyped_storage().data_ptr() for t in tensors}
            for result in tree_flatten(out)[0]:
                if not isinstance(result, torch.Tensor) or not result.numel():
                    continue
                fresh = result.untyped_storage().data_ptr() not in inputs
                in_place = _in_place(getattr(func, "__name__", "")) or "out" in kwargs
                if fresh or in_place:
                    slots = batch_shape(tuple(result.shape), core)
                    self._record(result, step if np.shape(step) in ((), slots)
                                 else _fit(step, slots) if core == 0
                                 else _overall([np.asarray(step)]))
            return out

    return DepthMode


def _numpy_index(torch: Any, index: Any) -> Any:
    """A tensor index (tensors, lists, slices, ints, None, Ellipsis) as numpy's."""
    if isinstance(index, tuple):
        return tuple(_numpy_index(torch, i) for i in index)
    if isinstance(index, torch.Tensor):
        return index.detach().cpu().numpy()
    if isinstance(index, list):
        return np.asarray([_numpy_index(torch, i) for i in index])
    return index


def _in_place(name: str) -> bool:
    """add_, baddbmm_, __iadd__ write into their first operand; __getitem__ does not."""
    return (name.endswith("_") and not name.startswith("_")) or (
        name.startswith("__i") and name.endswith("__") and name != "__index__")


def _outside_numbers(data: Any) -> bool:
    """Floating-point numbers held outside the tensors: a numpy array, or anything that hands
    its buffer over (`__dlpack__`, `__array_interface__`), not a tensor and not a constant."""
    if data is None or type(data).__module__.startswith("torch"):
        return False
    if isinstance(data, np.ndarray):
        return data.dtype.kind in "fc"
    return hasattr(data, "__dlpack__") or hasattr(data, "__array_interface__")


@contextmanager
def torch_depth(unit: str = "matrix") -> Iterator[Callable[[Any], int]]:
    """Track depths while the block runs; yields `depth(result)`: the deepest slot of every
    tensor in a result (a tensor, or tuples and lists holding them), 0 (nothing measured) once
    numbers left the tensors (SlotDepths.escaped). `unit`: see UNITS."""
    import torch

    mode = _torch_mode(torch, UNITS[unit])()

    def depth(result: Any) -> int:
        from torch.utils._pytree import tree_flatten

        if mode.depths.escaped:
            return 0
        return _overall([mode.depth(t) for t in tree_flatten(result)[0]
                         if isinstance(t, torch.Tensor) and t.numel()])

    # Made from a buffer without a torch function a mode sees: noted on the way in.
    makers = {name: getattr(torch, name) for name in ("from_numpy", "from_dlpack", "frombuffer")}

    def noted(make: Callable[..., Any]) -> Callable[..., Any]:
        def made(*args: Any, **kwargs: Any) -> Any:
            result = make(*args, **kwargs)
            if result.is_floating_point() or result.is_complex():
                mode.depths.escaped = True
            return result
        return made

    for name, make in makers.items():
        setattr(torch, name, noted(make))
    try:
        with mode:
            yield depth
    finally:
        for name, make in makers.items():
            setattr(torch, name, make)


# --- numpy --------------------------------------------------------------------------------------


_NUMPY_PRODUCTS = (np.dot, np.einsum, np.tensordot, np.linalg.multi_dot, np.inner, np.vdot)
"""The numpy functions that multiply (one level deeper than their deepest input)."""


class _DepthArray(np.ndarray):
    """An ndarray whose products and writes are seen by the current SlotDepths."""

    current: SlotDepths | None = None

    @staticmethod
    def where(a: np.ndarray) -> tuple[int, np.ndarray]:
        root = a
        while isinstance(root.base, np.ndarray):
            root = root.base
        key = int(root.__array_interface__["data"][0])
        start = int(a.__array_interface__["data"][0])
        itemsize = a.itemsize or 1
        core = _DepthArray.current.core if _DepthArray.current is not None else 2
        return key, SlotDepths(core).offsets((start - key) // itemsize, a.shape,
                                             tuple(s // itemsize for s in a.strides))

    @classmethod
    def depth(cls, a: Any) -> np.ndarray:
        if not isinstance(a, np.ndarray) or not a.size or cls.current is None:
            return _ZEROS(())
        return cls.current.read(*cls.where(a))

    @classmethod
    def record(cls, a: np.ndarray, depths: Any) -> None:
        if cls.current is not None and a.size:
            cls.current.write(*cls.where(a), depths)

    def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
        plain = [i.view(np.ndarray) if isinstance(i, _DepthArray) else i for i in inputs]
        outs = kwargs.get("out")
        if outs:
            kwargs["out"] = tuple(o.view(np.ndarray) if isinstance(o, _DepthArray) else o
                                  for o in outs)
        ins = [self.depth(i) for i in inputs]
        core = self.current.core if self.current is not None else 2
        products = (np.matmul, np.multiply) if core == 0 else (np.matmul,)
        if ufunc in products:
            step = _broadcast_max(*ins) + 1
        elif core == 0 and method == "__call__":  # elementwise: each element its own depth
            step = _broadcast_max(*ins)
        else:
            step = np.asarray(_overall(ins))
        result = getattr(ufunc, method)(*plain, **kwargs)
        for out in (kwargs["out"] if outs else _as_tuple(result)):
            if isinstance(out, np.ndarray):
                slots = batch_shape(out.shape, core)
                self.record(out, step if np.shape(step) == slots else _fit(step, slots)
                            if core == 0 else _overall([step]))
        return as_watched(result, _DepthArray)

    def __array_function__(self, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
        plain = as_plain(args, _DepthArray)
        result = func(*plain, **as_plain(kwargs, _DepthArray))
        ins = [self.depth(a) for a in _flat(args)]
        step = _overall(ins) + (1 if func in _NUMPY_PRODUCTS else 0)
        for out in _as_tuple(result):
            if isinstance(out, np.ndarray) and not any(
                    isinstance(p, np.ndarray) and np.may_share_memory(out, p)
                    for p in _flat(plain)):
                self.record(out, step)
        return as_watched(result, _DepthArray)

    def __array_finalize__(self, source: Any) -> None:
        """A copy (a.copy(), np.array(a)) carries its source's depths; a view shares them."""
        if isinstance(source, np.ndarray) and self.size and self.shape == source.shape \
                and not np.may_share_memory(self, source):
            self.record(self, self.depth(source))

    def __getitem__(self, index: Any) -> Any:
        result = super().__getitem__(index)
        if not isinstance(result, np.ndarray):  # one number, out of the arrays
            self._escape()
            return result
        current = self.current
        if current is not None and current.core == 0 and isinstance(result, np.ndarray) \
                and result.size and not np.may_share_memory(result, self):
            # Element by element, a copy made by advanced indexing carries the depths of the
            # elements it was read from (a view shares them anyway).
            key, grid = self.where(self.view(np.ndarray))
            sources = np.asarray(grid[as_plain(index, _DepthArray)])
            self.record(result, current.read(key, sources))
        return result

    def __setitem__(self, index: Any, value: Any) -> None:
        np.ndarray.__setitem__(self.view(np.ndarray), index, as_plain(value, _DepthArray))
        if self.current is not None and self.current.core == 0 and self.size:
            # Every axis indexes slots: the same index on the grid of offsets finds the
            # elements written, fancy indexing (a copy, not a view) included.
            key, grid = self.where(self.view(np.ndarray))
            targets = np.asarray(grid[as_plain(index, _DepthArray)])
            if targets.size:
                self.current.write(key, targets, _fit(self.depth(value), targets.shape))
            return
        target = self.view(np.ndarray)[index]
        if isinstance(target, np.ndarray):
            source = self.depth(value)
            self.record(target, source if np.shape(source) == target.shape[:-2]
                        else _overall([source]))

    def dot(self, b: Any, out: Any = None) -> Any:
        return np.dot(self, b, out=out)

    def _escape(self) -> None:
        if self.current is not None and self.dtype.kind in "fc":
            self.current.escaped = True

    def tolist(self) -> Any:
        self._escape()
        return self.view(np.ndarray).tolist()

    def item(self, *args: Any) -> Any:
        self._escape()
        return self.view(np.ndarray).item(*args)

    def __float__(self) -> float:
        self._escape()
        return float(self.view(np.ndarray))

    def __int__(self) -> int:
        self._escape()
        return int(self.view(np.ndarray))


def _as_tuple(result: Any) -> tuple[Any, ...]:
    return result if isinstance(result, tuple) else (result,)


def _flat(items: Any) -> list[Any]:
    if isinstance(items, list | tuple):
        return [x for item in items for x in _flat(item)]
    return [items]


@contextmanager
def numpy_depth(unit: str = "matrix"
                ) -> Iterator[tuple[Callable[[np.ndarray], np.ndarray], Callable[[Any], int]]]:
    """Track depths while the block runs; yields (wrap an input array, depth of a result).
    `unit`: see UNITS."""
    previous = _DepthArray.current
    _DepthArray.current = slots = SlotDepths(UNITS[unit])
    originals = {name: getattr(np, name) for name in ("asarray", "array", "ascontiguousarray")}
    # Element by element, a buffer made from nothing (np.ones((T, D)), then filled) is watched
    # too: a loop writing h[t] = state into np.zeros((T, D)) is seen as the chain it is.
    made = {name: getattr(np, name) for name in (
        ("zeros", "ones", "empty", "full") if unit == "element" else ())}

    def keep(name: str) -> Callable[..., Any]:
        original = originals[name]

        def converter(obj: Any, *args: Any, **kwargs: Any) -> Any:
            result = original(obj, *args, **kwargs)
            if isinstance(obj, _DepthArray) and not isinstance(result, _DepthArray):
                return result.view(_DepthArray)
            return result

        return converter

    def watched(name: str) -> Callable[..., Any]:
        original = made[name]
        return lambda *args, **kwargs: original(*args, **kwargs).view(_DepthArray)

    def depth(result: Any) -> int:
        if slots.escaped:
            return 0
        return _overall([_DepthArray.depth(a) for a in _flat(result) if isinstance(a, np.ndarray)])

    for name in originals:
        setattr(np, name, keep(name))
    for name in made:
        setattr(np, name, watched(name))
    try:
        yield (lambda a: a.view(_DepthArray)), depth
    finally:
        for name, original in {**originals, **made}.items():
            setattr(np, name, original)
        _DepthArray.current = previous
