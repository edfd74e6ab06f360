"""Matmul backward, candidate side: how each check calls the candidate's functions and reads what
came back, and the probes no generic kind covers.

Everything here runs in the child beside candidate code and returns plain data; the verdicts are
made in checks.py. A case arrives as {"inputs": {"A": array, "B": array, "dC": array},
"label": str, "extra": {...}}.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from grader.round_api.probes import Api, CandidateFault, Raised, as_dict, leaf

# --- readers: the pair (dA, dB) ----------------------------------------------------------------


def _pair(value: Any) -> tuple[Any, Any]:
    if not isinstance(value, tuple | list) or len(value) != 2:
        raise CandidateFault(f"the backward should return the pair (dA, dB); it returned a "
                             f"{type(value).__name__}")
    return value[0], value[1]


def read_pair(api: Api, args: tuple[Any, ...], value: Any) -> dict[str, np.ndarray]:
    dA, dB = _pair(value)
    return {"dA": api.backend.to_numpy(dA, "dA"), "dB": api.backend.to_numpy(dB, "dB")}


def read_da(api: Api, args: tuple[Any, ...], value: Any) -> np.ndarray:
    return api.backend.to_numpy(_pair(value)[0], "dA")


def read_db(api: Api, args: tuple[Any, ...], value: Any) -> np.ndarray:
    return api.backend.to_numpy(_pair(value)[1], "dB")


# --- Part 3: autograd through the candidate's Function -----------------------------------------


def _leaves(case: dict[str, Any], *names: str) -> list[Any]:
    """float64/float32 torch leaves for `names` (requiring grad), plain tensors for the rest
    of A, B, dC."""
    import torch

    return [leaf(case["inputs"][n]) if n in names else torch.from_numpy(
        np.array(case["inputs"][n], copy=True)) for n in ("A", "B", "dC")]


def _product(api: Api, A: Any, B: Any) -> tuple[Any, Any]:
    """(C, None) from the candidate's matmul, or (None, what it raised)."""
    value, raised = api.call(api.function("matmul"), A, B)
    return (None, raised) if raised else (api.backend.to_tensor(value, "matmul(A, B)"), None)


def _function_node(C: Any) -> Any:
    """C's grad_fn, which must be a custom Function's node (its ctx)."""
    node = C.grad_fn
    if node is None:
        raise CandidateFault("matmul(A, B)'s result does not require grad though its inputs "
                             "do: nothing connects it to them (a detach, or an operation "
                             "outside autograd, on the way)")
    if not hasattr(node, "_forward_cls"):
        raise CandidateFault("matmul(A, B) did not go through a custom autograd.Function "
                             "(see part3.function)")
    return node


def autograd_grads(api: Api, case: dict[str, Any]) -> dict[str, Any]:
    """A.grad and B.grad after (matmul(A, B) * dC).sum().backward()."""
    A, B, dC = _leaves(case, "A", "B")
    C, raised = _product(api, A, B)
    if raised:
        return {"value": None, "raised": raised.as_dict(), "stage": "forward"}
    _, raised = api.call(lambda: C.backward(dC))
    if raised:
        return {"value": None, "raised": raised.as_dict(), "stage": "backward"}
    missing = [name for name, leaf in (("A", A), ("B", B)) if leaf.grad is None]
    if missing:
        raise CandidateFault(f"{' and '.join(f'{n}.grad' for n in missing)} stayed None after "
                             f"backward: matmul's result is not connected to "
                             f"{' and '.join(missing)}")
    return {"value": {"dA": A.grad.numpy().copy(), "dB": B.grad.numpy().copy()},
            "raised": None, "stage": "backward"}


def forward_backward(api: Api, natives: dict[str, Any]) -> Raised | None:
    """matmul on the natives, then a backward (they are the leaves): what was raised."""
    A, B = natives["A"].requires_grad_(), natives["B"].requires_grad_()
    C, raised = _product(api, A, B)
    if raised:
        return raised
    return api.call(lambda: C.backward(natives["dC"]))[1]


def saved_tensors(api: Api, case: dict[str, Any]) -> dict[str, Any]:
    """What the Function saved for backward (saved-tensor hooks see save_for_backward), and
    which tensors it kept as plain ctx attributes instead."""
    import torch

    A, B, _ = _leaves(case, "A", "B")
    packed: list[Any] = []

    def pack(t: Any) -> Any:
        packed.append(t)
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        C, raised = _product(api, A, B)
    if raised:
        return {"raised": raised.as_dict()}

    def label(t: Any) -> str:
        for name, x in (("A", A), ("B", B), ("output", C)):
            if t is x or (t.shape == x.shape and t.data_ptr() == x.data_ptr()):
                return name
        for name, x in (("A", A), ("B", B)):
            if t.shape == x.shape and torch.equal(t.detach(), x.detach()):
                return f"{name} copy"
        return f"a tensor of shape {tuple(t.shape)}"

    def holds_tensor(v: Any) -> bool:
        return isinstance(v, torch.Tensor) or (isinstance(v, tuple | list) and any(
            isinstance(x, torch.Tensor) for x in v))

    node = _function_node(C)
    stashed = sorted(k for k, v in vars(node).items() if holds_tensor(v) and k != "to_save")
    return {"raised": None, "saved": [label(t) for t in packed], "stashed": stashed}


def double_backward(api: Api, case: dict[str, Any]) -> dict[str, Any]:
    """First-order gradients with create_graph, then L2 = sum(dA * vA) + sum(dB * vB) +
    sum(C * W) backpropagated with .backward(): unlike autograd.grad, it runs every node,
    once_differentiable's refusal included. A, B and dC are the leaves."""
    import torch

    A, B, dC = (leaf(case["inputs"][n]) for n in ("A", "B", "dC"))
    vA, vB, W = (torch.from_numpy(np.asarray(case["extra"][n])) for n in ("vA", "vB", "W"))
    C, raised = _product(api, A, B)
    if raised:
        return {"raised": raised.as_dict(), "stage": "forward"}
    first, raised = api.call(lambda: torch.autograd.grad(C, (A, B), dC, create_graph=True))
    if raised:
        return {"raised": raised.as_dict(), "stage": "first backward"}
    dA, dB = first
    L2 = (dA * vA).sum() + (dB * vB).sum() + (C * W).sum()
    _, raised = api.call(L2.backward)
    if raised:
        return {"raised": raised.as_dict(), "stage": "double backward"}
    return {"raised": None, "value": {
        name: (x.grad if x.grad is not None else torch.zeros_like(x)).detach().numpy().copy()
        for name, x in (("dL2/dA", A), ("dL2/dB", B), ("dL2/d(dC)", dC))}}


# --- the interviewer's follow-up demonstrations -------------------------------------------------


def _natives(api: Api, case: dict[str, Any]) -> list[Any]:
    return [api.backend.native(case["inputs"][n]) for n in ("A", "B", "dC")]


def followup_part1(api: Api, case: dict[str, Any]) -> dict[str, Any]:
    """The matmul flops of the candidate's backward."""
    counted, raised = api.call(lambda: api.backend.count_matmul_flops(
        api.function("matmul_backward"), *_natives(api, case)))
    return {"raised": as_dict(raised), "flops": int(counted[1]) if counted else 0}


def followup_part2(api: Api, case: dict[str, Any]) -> dict[str, Any]:
    """The peak fresh memory of the candidate's batched backward on a Linear-like case."""
    counted, raised = api.call(lambda: api.backend.extra_memory(
        api.function("batched_matmul_backward"), *_natives(api, case)))
    return {"raised": as_dict(raised), "extra": int(counted[1]) if counted else 0}


def followup_part3(api: Api, case: dict[str, Any]) -> dict[str, Any]:
    """A modified in place between the forward and the backward (A is a non-leaf, an
    activation of a network, so torch allows the write)."""
    import torch

    A0, B = (leaf(case["inputs"][n]) for n in ("A", "B"))
    dC = torch.from_numpy(np.array(case["inputs"]["dC"]))
    A = A0 * 1.0
    C, raised = _product(api, A, B)
    if raised:
        return {"stage": "forward", "raised": raised.as_dict()}
    A.mul_(2.0)
    _, raised = api.call(lambda: C.backward(dC))
    return {"stage": "backward", "raised": as_dict(raised),
            "dB": None if raised or B.grad is None else B.grad.numpy().copy()}
