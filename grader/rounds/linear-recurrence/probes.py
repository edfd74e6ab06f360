"""Linear recurrence, candidate side: how each check calls the candidate's functions and reads what
came back, and the probes no generic kind covers.

Everything here runs in the child beside candidate code and returns plain data; the verdicts are
made in checks.py. A case arrives as {"inputs": {"a", "b", "h0", "h", "dh"}, "label": str}.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from grader.round_api.probes import (
    Api,
    CandidateFault,
    Raised,
    as_dict,
    leaf,
    numpy_depth,
    torch_depth,
)

GRADIENTS = ("da", "db", "dh0")

# --- argument builders and readers --------------------------------------------------------------


def pairs(api: Api, case: dict[str, Any]) -> tuple[Any, Any]:
    """combine's two maps, (a1, b1) then (a2, b2), as the flavor's arrays."""
    n = {k: api.backend.native(v) for k, v in case["inputs"].items()}
    return (n["a1"], n["b1"]), (n["a2"], n["b2"])


def _split(value: Any, count: int, what: str) -> tuple[Any, ...]:
    if not isinstance(value, tuple | list) or len(value) != count:
        raise CandidateFault(f"{what} should return a tuple of {count}; it returned a "
                             f"{type(value).__name__}"
                             + (f" of {len(value)}" if isinstance(value, tuple | list) else ""))
    return tuple(value)


def read_map(api: Api, args: tuple[Any, ...], value: Any) -> dict[str, np.ndarray]:
    """combine's result: the pair (a, b)."""
    a, b = _split(value, 2, "combine")
    return {"a": api.backend.to_numpy(a, "combine(...)[0]"),
            "b": api.backend.to_numpy(b, "combine(...)[1]")}


def read_grads(api: Api, args: tuple[Any, ...], value: Any) -> dict[str, np.ndarray]:
    """recurrence_backward's (da, db, dh0)."""
    parts = _split(value, 3, "recurrence_backward")
    return {name: api.backend.to_numpy(x, name) for name, x in zip(GRADIENTS, parts, strict=True)}


def read_da(api: Api, args: tuple[Any, ...], value: Any) -> np.ndarray:
    return read_grads(api, args, value)["da"]


def read_db(api: Api, args: tuple[Any, ...], value: Any) -> np.ndarray:
    return read_grads(api, args, value)["db"]


def read_dh0(api: Api, args: tuple[Any, ...], value: Any) -> np.ndarray:
    return read_grads(api, args, value)["dh0"]


# --- what the depth checks measure ----------------------------------------------------------------


def scan_result(api: Api, natives: dict[str, Any]) -> Any:
    """Part 2's h (its depth is what part2.depth measures)."""
    return api.function("scan_recurrence")(natives["a"], natives["b"], natives["h0"])


def backward_result(api: Api, natives: dict[str, Any]) -> Any:
    """Part 3's (da, db, dh0)."""
    return api.function("recurrence_backward")(natives["a"], natives["h0"], natives["h"],
                                               natives["dh"])


# --- Part 4: autograd through the candidate's Function ----------------------------------------


def _leaves(case: dict[str, Any], *names: str) -> dict[str, Any]:
    """Torch tensors of the case's inputs, leaves requiring grad for `names`."""
    import torch

    return {n: leaf(v) if n in names else torch.from_numpy(np.array(v, copy=True))
            for n, v in case["inputs"].items()}


def _through(api: Api, t: dict[str, Any]) -> tuple[Any, Raised | None]:
    value, raised = api.call(api.function("linear_recurrence_scan"), t["a"], t["b"], t["h0"])
    return (None, raised) if raised else (api.backend.to_tensor(value, "h"), None)


def _node(h: Any) -> Any:
    node = h.grad_fn
    if not hasattr(node, "_forward_cls"):
        raise CandidateFault("linear_recurrence_scan(a, b, h0) did not go through a custom "
                             "autograd.Function (see part4.function)")
    return node


def autograd_grads(api: Api, case: dict[str, Any]) -> dict[str, Any]:
    """a.grad, b.grad and h0.grad after linear_recurrence_scan(a, b, h0).backward(dh)."""
    t = _leaves(case, "a", "b", "h0")
    h, raised = _through(api, t)
    if raised:
        return {"value": None, "raised": raised.as_dict(), "stage": "forward"}
    if not h.requires_grad:
        raise CandidateFault("linear_recurrence_scan's result does not require grad: it is cut "
                             "off from a, b and h0")
    _, raised = api.call(lambda: h.backward(t["dh"]))
    if raised:
        return {"value": None, "raised": raised.as_dict(), "stage": "backward"}
    grads = {}
    for name, key in zip(GRADIENTS, ("a", "b", "h0"), strict=True):
        grad = t[key].grad
        if grad is None:
            raise CandidateFault(f"{key}.grad stayed None after backward")
        grads[name] = grad.detach().numpy().copy()
    return {"value": grads, "raised": None, "stage": "backward"}


def forward_backward(api: Api, natives: dict[str, Any]) -> Raised | None:
    """The Function's forward on the natives (made leaves), then a backward: what was raised."""
    for name in ("a", "b", "h0"):
        natives[name].requires_grad_()
    h, raised = _through(api, natives)
    if raised:
        return raised
    return api.call(lambda: h.backward(natives["dh"]))[1]


def _saved(api: Api, fn: Any, t: dict[str, Any]) -> dict[str, Any]:
    """What autograd saved for backward while fn ran (saved-tensor hooks)."""
    import torch

    packed: list[Any] = []

    def pack(x: Any) -> Any:
        packed.append(x)
        return x

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda x: x):
        value, raised = api.call(fn, t["a"], t["b"], t["h0"])
    return {"value": value, "raised": as_dict(raised), "count": len(packed),
            "shapes": [list(x.shape) for x in packed],
            "numbers": int(sum(x.numel() for x in packed)), "nodes": _nodes(value)}


def _nodes(value: Any) -> int:
    """The backward nodes autograd recorded behind a result (leaves' accumulators aside)."""
    seen: set[int] = set()
    stack = [getattr(value, "grad_fn", None)]
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen or type(node).__name__ == "AccumulateGrad":
            continue
        seen.add(id(node))
        stack.extend(next_node for next_node, _ in node.next_functions)
    return len(seen)


def saved_tensors(api: Api, case: dict[str, Any]) -> dict[str, Any]:
    """What the Function saved with save_for_backward, and tensors kept as ctx attributes."""
    import torch

    seen = _saved(api, api.function("linear_recurrence_scan"), _leaves(case, "a", "b", "h0"))
    if seen["raised"]:
        return {"raised": seen["raised"]}

    def holds_tensor(v: Any) -> bool:
        return isinstance(v, torch.Tensor) or (isinstance(v, tuple | list) and any(
            isinstance(x, torch.Tensor) for x in v))

    node = _node(api.backend.to_tensor(seen["value"], "h"))
    stashed = sorted(k for k, v in vars(node).items() if holds_tensor(v) and k != "to_save")
    return {"raised": None, "shapes": seen["shapes"], "numbers": seen["numbers"],
            "stashed": stashed}


# --- the interviewer's follow-up demonstrations -------------------------------------------------


def followup_part1(api: Api, a: np.ndarray, b: np.ndarray, h0: np.ndarray) -> dict[str, Any]:
    """The candidate's loop on a long sequence of equal a's, b = 0 and h0 = 1, in both dtypes."""
    found: dict[str, Any] = {}
    for dtype in ("float64", "float32"):
        args = [api.backend.native(np.asarray(x, dtype=dtype)) for x in (a, b, h0)]
        value, raised = api.call(api.function("linear_recurrence"), *args)
        if raised:
            return {"raised": raised.as_dict()}
        found[dtype] = api.backend.to_numpy(value, "h")
    return {"raised": None, "h": found}


def _natives(api: Api, case: dict[str, Any]) -> dict[str, Any]:
    return {n: api.backend.native(np.asarray(v)) for n, v in case["inputs"].items()}


def followup_part2(api: Api, work: list[dict[str, Any]],
                   depth: list[dict[str, Any]]) -> dict[str, Any]:
    """The multiplications of the candidate's scan at two lengths, and its depth at two."""
    scan = api.function("scan_recurrence")
    products, depths = [], []
    for case in work:
        n = _natives(api, case)
        counted, raised = api.call(api.backend.count_products, scan, n["a"], n["b"], n["h0"])
        if raised:
            return {"raised": raised.as_dict()}
        products.append(int(counted[1]))
    for case in depth:
        if api.flavor == "torch":
            n = _natives(api, case)
            with torch_depth("element") as measure:
                value, raised = api.call(scan, n["a"], n["b"], n["h0"])
                found = measure(value)
        else:
            with numpy_depth("element") as (wrap, measure):
                n = {k: wrap(v) for k, v in _natives(api, case).items()}
                value, raised = api.call(scan, n["a"], n["b"], n["h0"])
                found = measure(value)
        if raised:
            return {"raised": raised.as_dict()}
        depths.append(found)
    return {"raised": None, "products": products, "depths": depths}


def followup_part3(api: Api, a: np.ndarray, h0: np.ndarray, h: np.ndarray,
                   dh: np.ndarray) -> dict[str, Any]:
    """The candidate's backward with dh zero but at the last step."""
    args = [api.backend.native(np.asarray(x)) for x in (a, h0, h, dh)]
    value, raised = api.call(api.function("recurrence_backward"), *args)
    if raised:
        return {"raised": raised.as_dict()}
    return {"raised": None, "db": read_grads(api, tuple(args), value)["db"]}


def followup_part4(api: Api, case: dict[str, Any]) -> dict[str, Any]:
    """What autograd keeps for backward: through the candidate's Function, and through their
    Part 1 loop recorded by autograd."""
    from pathlib import Path

    from grader.round_api.probes import Round

    function = _saved(api, api.function("linear_recurrence_scan"), _leaves(case, "a", "b", "h0"))
    if function["raised"]:
        return {"raised": function["raised"]}
    round_ = Round.load(Path(__file__).resolve().parent)
    loop = api.other_part(round_.part("part1").module).linear_recurrence
    through_loop = _saved(api, loop, _leaves(case, "a", "b", "h0"))
    if through_loop["raised"]:
        return {"raised": through_loop["raised"]}
    keep = ("count", "numbers", "nodes")
    return {"raised": None, "function": {k: function[k] for k in keep},
            "loop": {k: through_loop[k] for k in keep}}
