"""Autograd pitfalls, candidate side: the models the checks train, the runs that call the
candidate's functions on them, what those runs observe, and the interviewer's demonstrations.

Everything here runs beside candidate code and returns plain data; the verdicts are made in
checks.py, which runs the same runs on the reference (and on the known slips) to know what
to expect. A case arrives as {"inputs": {name: array}, "label": str, "extra": {...}}: the
model's parameters under their state-dict names, the batches as x0, y0, x1, y1, ..., and in
`extra` the model's layout, the run to make ("run") and its settings (lr, steps).
"""

from __future__ import annotations

import gc
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import torch

from grader.round_api.probes import Api, CandidateFault, as_dict, spying_on_the_engine

Case = dict[str, Any]
Run = dict[str, Any]


def warm() -> None:
    """Run once where the children are forked (docs/rounds.md): the first optimizer a
    process makes imports torch._dynamo (about a second), which each child that trains a
    model, the candidate's and the interviewer's demonstrations alike, then inherits."""
    torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.1)


# --- the models: named stages of Linear and Tanh layers, weights from the case -----------------


class Chain(torch.nn.Module):
    """Stages applied in order: model(x) = last(...(first(x))); each stage is also reachable by
    name (model.encoder, model.adapter, model.head)."""

    def __init__(self, stages: dict[str, torch.nn.Module]) -> None:
        super().__init__()
        for name, stage in stages.items():
            self.add_module(name, stage)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for stage in self.children():
            x = stage(x)
        return x


class TwoHeads(Chain):
    """A shared trunk and two heads: model(x) = (head_a(trunk(x)), head_b(trunk(x)))."""

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:  # type: ignore[override]
        trunk, head_a, head_b = (self.get_submodule(n) for n in ("trunk", "head_a", "head_b"))
        h = trunk(x)
        return head_a(h), head_b(h)


LAYOUTS: dict[str, type[Chain]] = {"chain": Chain, "two-heads": TwoHeads}


def build_model(case: Case) -> Chain:
    """The case's model, its parameters copied from the case's arrays (in their dtype)."""
    inputs, extra = case["inputs"], case["extra"]
    stages: dict[str, torch.nn.Module] = {}
    for stage, layers in extra["stages"].items():
        modules: list[torch.nn.Module] = []
        for index, kind in enumerate(layers):
            if kind == "tanh":
                modules.append(torch.nn.Tanh())
            else:
                weight = inputs[f"{stage}.{index}.weight"]
                modules.append(torch.nn.Linear(weight.shape[1], weight.shape[0],
                                               dtype=getattr(torch, str(weight.dtype))))
        stages[stage] = torch.nn.Sequential(*modules)
    model = LAYOUTS[extra["layout"]](stages)
    with torch.no_grad():
        for name, p in model.named_parameters():
            p.copy_(torch.from_numpy(np.array(inputs[name])))
    return model.train(extra.get("mode", "train") == "train")


def batches_of(case: Case) -> list[tuple[torch.Tensor, torch.Tensor]]:
    inputs = case["inputs"]
    return [(torch.from_numpy(np.array(inputs[f"x{i}"])), torch.from_numpy(np.array(
        inputs[f"y{i}"]))) for i in range(case["extra"]["batches"])]


def read_params(model: torch.nn.Module) -> dict[str, np.ndarray]:
    return {name: p.detach().numpy().copy() for name, p in model.named_parameters()}


def give_grads(model: torch.nn.Module, case: Case, prefix: str) -> None:
    """Gradients already in .grad when the candidate's function is called (left by earlier
    work), from the case's arrays named prefix + parameter name."""
    for name, p in model.named_parameters():
        if prefix + name in case["inputs"]:
            p.grad = torch.from_numpy(np.array(case["inputs"][prefix + name]))


def flag(condition: bool) -> float:
    """A yes/no observation as a number the judge compares: 1.0 is yes."""
    return 1.0 if condition else 0.0


def same_tensors(before: list[np.ndarray], tensors: list[torch.Tensor]) -> float:
    return flag(all(np.array_equal(b, t.detach().numpy()) for b, t in zip(before, tensors,
                                                                          strict=True)))


def as_float(value: Any, what: str) -> tuple[float, float, float]:
    """(the value, whether it is a Python float, whether it carries a graph) of a loss the
    candidate returned: a float, or a one-element tensor. A subclass of float is not a float
    here: it can hold the loss tensor, and its graph, on an attribute."""
    if isinstance(value, bool) or not isinstance(value, int | float | torch.Tensor):
        raise CandidateFault(f"{what} should be a float, got {type(value).__name__}")
    if isinstance(value, torch.Tensor):
        if value.numel() != 1:
            raise CandidateFault(f"{what} should be a float, got a tensor of shape "
                                 f"{tuple(value.shape)}")
        return float(value.detach()), 0.0, flag(value.grad_fn is not None)
    return float(value), flag(type(value) is float), 0.0


def floats(value: Any, count: int, what: str) -> list[float]:
    """A list of `count` losses as floats (a tensor in it is a fault: the docstring asks for
    floats, and a tensor would keep its step's graph)."""
    if not isinstance(value, list | tuple) or len(value) != count:
        raise CandidateFault(f"{what} should be a list of {count} floats, got "
                             f"{type(value).__name__}"
                             + (f" of length {len(value)}" if isinstance(value, list | tuple)
                                else ""))
    for index, item in enumerate(value):
        if isinstance(item, bool) or not isinstance(item, int | float):
            raise CandidateFault(f"{what}[{index}] should be a float, got "
                                 f"{type(item).__name__} (loss.item() gives the float)")
    return [float(v) for v in value]


def outcome(api: Api, fn: Callable[..., Any], *args: Any) -> tuple[Any, Run | None]:
    """(value, None), or (None, the run to report) when the call raised."""
    value, raised = api.call(fn, *args)
    return value, (None if raised is None else {"value": None, "raised": raised.as_dict()})


# --- the runs: each calls the candidate's functions on one case ---------------------------------


def run_train(api: Api, case: Case) -> Run:
    """Part 1: train the case's model; its parameters and losses afterwards."""
    extra = case["extra"]
    model, batches = build_model(case), batches_of(case)
    give_grads(model, case, "stale.")
    before = [t.numpy().copy() for pair in batches for t in pair]
    value, failed = outcome(api, api.function("train"), model, batches, extra["lr"],
                            extra["steps"])
    if failed:
        return failed
    return {"value": {"params": read_params(model),
                      "losses": floats(value, extra["steps"], "train's result"),
                      "batches unchanged": same_tensors(before, [t for p in batches for t in p])},
            "raised": None}


def leaves(case: Case) -> list[torch.Tensor]:
    """Part 2's parameters: leaves that require grad, with .grad where the case has one."""
    params = []
    for index in range(case["extra"]["params"]):
        p = torch.from_numpy(np.array(case["inputs"][f"p{index}"])).requires_grad_()
        if f"g{index}" in case["inputs"]:
            p.grad = torch.from_numpy(np.array(case["inputs"][f"g{index}"]))
        params.append(p)
    return params


def run_sgd_update(api: Api, case: Case) -> Run:
    """Part 2: update leaf parameters through a generator (as model.parameters() is one); what
    the original tensor objects hold afterwards, and whether autograd saw the write."""
    params = leaves(case)
    addresses = [p.data_ptr() for p in params]
    versions = [p._version for p in params]
    grads = [None if p.grad is None else p.grad.numpy().copy() for p in params]
    _, failed = outcome(api, api.function("sgd_update"), (p for p in params),
                        case["extra"]["lr"])
    if failed:
        return failed
    return {"value": {
        "params": [p.detach().numpy().copy() for p in params],
        "same memory": [flag(p.data_ptr() == a) for p, a in zip(params, addresses, strict=True)],
        "requires grad": [flag(p.requires_grad) for p in params],
        "leaf": [flag(p.is_leaf) for p in params],
        "graph attached": [flag(p.grad_fn is not None) for p in params],
        "gradients unchanged": [flag(g is None and p.grad is None or g is not None
                                     and p.grad is not None
                                     and np.array_equal(g, p.grad.numpy()))
                                for p, g in zip(params, grads, strict=True)],
        "version counter moved": [flag(p._version != v)
                                  for p, v in zip(params, versions, strict=True)],
    }, "raised": None}


class GraphWatch:
    """Counts, during a call, the forward passes of a model that recorded a graph and the
    tensors saved for backward, and how many earlier passes' graphs are still alive when a
    pass begins.

    A graph's nodes are C++ objects Python cannot take a weak reference to; a hook object
    registered on a node lives exactly as long as the node, so a weak reference to the hook
    says whether the node (and with it that pass's graph) is still held by anything."""

    def __init__(self, model: torch.nn.Module) -> None:
        self.recorded = 0
        self.saved = 0
        self.sentinels: list[weakref.ref[_Sentinel]] = []
        self.alive_at: list[int] = []
        self.handle = model.register_forward_hook(self._forward)

    def _forward(self, module: Any, args: Any, output: Any) -> None:
        gc.collect(1)  # the young generation: a cycle made during the step, not the heap
        self.alive_at.append(sum(ref() is not None for ref in self.sentinels))
        if isinstance(output, torch.Tensor) and output.grad_fn is not None:
            self.recorded += 1
            sentinel = _Sentinel()
            output.grad_fn.register_hook(sentinel)
            self.sentinels.append(weakref.ref(sentinel))

    def _pack(self, t: torch.Tensor) -> torch.Tensor:
        self.saved += 1
        return t

    @contextmanager
    def watching(self) -> Iterator[GraphWatch]:
        try:
            with torch.autograd.graph.saved_tensors_hooks(self._pack, lambda t: t):
                yield self
        finally:
            self.handle.remove()

    def alive(self) -> int:
        """Graphs of earlier passes alive when the last pass began."""
        return self.alive_at[-1] if self.alive_at else 0


class _Sentinel:
    """A do-nothing node hook, whose lifetime is the node's."""

    def __call__(self, *grads: Any) -> None:
        return None


def _loss_value(value: Any, what: str) -> dict[str, float]:
    loss, is_float, graph = as_float(value, what)
    return {"result": loss, "returns a float": is_float, "result carries a graph": graph}


def _losses_value(losses: list[tuple[float, float, float]]) -> dict[str, Any]:
    """Several returned losses (as_float of each): their values, whether every one is a
    Python float, whether any carries a graph."""
    return {"losses": [loss for loss, _, _ in losses],
            "losses are floats": flag(all(is_float for _, is_float, _ in losses)),
            "losses carry a graph": flag(any(graph for _, _, graph in losses))}


def run_evaluate(api: Api, case: Case) -> Run:
    """Part 3: evaluate the case's model; the result, and what autograd recorded meanwhile."""
    model, batches = build_model(case), batches_of(case)
    before = [t.numpy().copy() for pair in batches for t in pair]
    params, mode = read_params(model), model.training
    with GraphWatch(model).watching() as watch:
        value, failed = outcome(api, api.function("evaluate"), model, batches)
    if failed:
        return failed
    return {"value": {
        **_loss_value(value, "evaluate's result"),
        "graphs recorded": float(watch.recorded),
        "tensors saved for backward": float(watch.saved),
        "model unchanged": flag(all(np.array_equal(params[n], p.detach().numpy())
                                    and p.grad is None for n, p in model.named_parameters())),
        "training mode kept": flag(model.training == mode),
        "batches unchanged": same_tensors(before, [t for p in batches for t in p]),
    }, "raised": None}


def run_running_loss(api: Api, case: Case) -> Run:
    """Part 3: one epoch of running_loss; the result, the parameters, and how many earlier
    steps' graphs were still alive when the last step began."""
    model, batches = build_model(case), batches_of(case)
    give_grads(model, case, "stale.")
    before = [t.numpy().copy() for pair in batches for t in pair]
    with GraphWatch(model).watching() as watch:
        value, failed = outcome(api, api.function("running_loss"), model, batches,
                                case["extra"]["lr"])
        alive = watch.alive()
    if failed:
        return failed
    return {"value": {
        **_loss_value(value, "running_loss's result"),
        "params": read_params(model),
        "batches unchanged": same_tensors(before, [t for p in batches for t in p]),
        "earlier graphs alive at the last step": float(alive),
    }, "raised": None}


def read_grads(model: torch.nn.Module) -> dict[str, np.ndarray]:
    """Every parameter's .grad; a missing one reads as NaN (no gradient reached it)."""
    return {name: np.full(tuple(p.shape), np.nan) if p.grad is None
            else p.grad.detach().numpy().copy() for name, p in model.named_parameters()}


def run_two_heads(api: Api, case: Case) -> Run:
    """Part 4: both heads' backward; the gradients, the losses, and whether the last backward
    kept the graph."""
    model = build_model(case)
    give_grads(model, case, "grad.")
    x = torch.from_numpy(np.array(case["inputs"]["x"]))
    before = x.numpy().copy()
    with spying_on_the_engine() as spy:
        value, failed = outcome(api, api.function("two_heads_backward"), model, x)
    if failed:
        return failed
    if not isinstance(value, tuple | list) or len(value) != 2:
        raise CandidateFault("two_heads_backward should return the pair (loss_a, loss_b)")
    losses = [as_float(v, f"loss_{n}") for v, n in zip(value, "ab", strict=True)]
    return {"value": {
        "grads": read_grads(model),
        **_losses_value(losses),
        "x unchanged": flag(np.array_equal(before, x.numpy())),
        "last backward keeps the graph": flag(bool(spy.kept) and spy.kept[-1]),
    }, "raised": None}


def trunk_gradient(api: Api, case: Case) -> Run:
    """Part 4's run, reading the trunk weight's gradient alone (for finite differences)."""
    run = run_two_heads(api, case)
    return run if run["raised"] else {"value": run["value"]["grads"]["trunk.0.weight"],
                                      "raised": None}


def run_fine_tune(api: Api, case: Case) -> Run:
    """Part 5: freeze_encoder, then `steps` fine_tune steps; what was frozen, what was
    returned as trainable, and which parameters changed."""
    extra = case["extra"]
    model = build_model(case)
    x, y = batches_of(case)[0]
    before = [x.numpy().copy(), y.numpy().copy()]
    start = read_params(model)
    trainable, failed = outcome(api, api.function("freeze_encoder"), model)
    if failed:
        return failed
    names = {id(p): name for name, p in model.named_parameters()}
    if not isinstance(trainable, list | tuple):
        raise CandidateFault(f"freeze_encoder should return a list of parameters, got "
                             f"{type(trainable).__name__}")
    returned = {names.get(id(p)) for p in trainable}
    frozen = {name: flag(p.requires_grad) for name, p in model.named_parameters()}
    losses = []
    for _ in range(extra["steps"]):
        value, failed = outcome(api, api.function("fine_tune"), model, x, y, extra["lr"])
        if failed:
            return failed
        losses.append(as_float(value, "fine_tune's result"))
    after = read_params(model)
    return {"value": {
        "requires grad after freeze_encoder": frozen,
        "returned as trainable by freeze_encoder": {n: flag(n in returned) for n in start},
        "changed": {n: flag(not np.array_equal(start[n], after[n])) for n in start},
        "has a gradient": {n: flag(p.grad is not None and bool(p.grad.abs().sum() > 0))
                           for n, p in model.named_parameters()},
        "params": after,
        **_losses_value(losses),
        "x and y unchanged": same_tensors(before, [x, y]),
    }, "raised": None}


# --- the interviewer's demonstrations: the stub's original code beside the candidate's ---------
#
# A follow-up runs one demonstration twice: on the candidate's functions (`followup`) and, in a
# child without candidate code, on the pristine stub's (`followup_stub`, compiled from the
# stub's text that the judge sends). `pick(*names)` gives the functions of either.

Pick = Callable[..., list[Callable[..., Any]]]


def followup(api: Api, demo: str, source: str, **data: Any) -> dict[str, Any]:
    """The demonstration on the candidate's fixed code."""
    return api.helper(demo)(api, lambda *names: [api.function(n) for n in names], **data)


def followup_stub(api: Api, demo: str, source: str, **data: Any) -> dict[str, Any]:
    """The same demonstration on the stub's original, buggy code (it holds the bug, not a
    solution)."""
    namespace: dict[str, Any] = {"__name__": "stub"}
    exec(compile(source, "the original stub", "exec"), namespace)
    return api.helper(demo)(api, lambda *names: [namespace[n] for n in names], **data)


def demo_train(api: Api, pick: Pick, case: Case) -> dict[str, Any]:
    """Part 1: the norm of the gradient each step's update used, and the losses."""
    (train,) = pick("train")
    model, batches = build_model(case), batches_of(case)
    norms: list[float] = []
    next(model.parameters()).register_post_accumulate_grad_hook(
        lambda p: norms.append(float(p.grad.norm())))
    value, raised = api.call(train, model, batches, case["extra"]["lr"], case["extra"]["steps"])
    return {"raised": as_dict(raised), "norms": norms,
            "losses": [float(v) for v in value] if raised is None else []}


def demo_sgd_update(api: Api, pick: Pick, case: Case, watched: str) -> dict[str, Any]:
    """Part 2: sgd_update on a model's parameters after backward; then backward through a
    graph that saved the `watched` parameter before the update (autograd must notice)."""
    (update,) = pick("sgd_update")
    model, ((x, y),) = build_model(case), batches_of(case)
    torch.nn.functional.mse_loss(model(x), y).backward()
    weight = model.get_parameter(watched)
    version = weight._version
    later = torch.nn.functional.mse_loss(model(x), y)
    _, raised = api.call(update, model.parameters(), case["extra"]["lr"])
    result: dict[str, Any] = {"raised": as_dict(raised), "versions": [version, weight._version],
                              "leaf": weight.is_leaf, "requires_grad": weight.requires_grad}
    if raised is None:
        result["stale"] = as_dict(api.call(later.backward)[1])
    return result


def demo_memory(api: Api, pick: Pick, cases: list[Case]) -> dict[str, Any]:
    """Part 3: earlier graphs alive at the last step of running_loss, and tensors evaluate
    saved for backward, as the number of batches grows."""
    evaluate, running = pick("evaluate", "running_loss")
    rows = []
    for case in cases:
        model, batches = build_model(case), batches_of(case)
        with GraphWatch(model).watching() as trained:
            total, raised = api.call(running, model, batches, case["extra"]["lr"])
            alive = trained.alive()
        if raised is None:
            with GraphWatch(model).watching() as evaluated:
                mean, raised = api.call(evaluate, model, batches)
        if raised is not None:
            return {"raised": raised.as_dict()}
        rows.append({"batches": len(batches), "alive": alive, "saved": evaluated.saved,
                     "graph": _carries_graph(total), "eval graph": _carries_graph(mean)})
    return {"raised": None, "rows": rows}


def _carries_graph(value: Any) -> bool:
    return isinstance(value, torch.Tensor) and value.grad_fn is not None


def demo_two_heads(api: Api, pick: Pick, case: Case) -> dict[str, Any]:
    """Part 4: both heads' backward on a fresh model: the error, or the backward runs (did
    each keep the graph?) and the gradients."""
    (backward,) = pick("two_heads_backward")
    model = build_model(case)
    with spying_on_the_engine() as spy:
        _, raised = api.call(backward, model, torch.from_numpy(np.array(case["inputs"]["x"])))
    return {"raised": as_dict(raised), "kept": spy.kept, "grads": read_grads(model)}


def _stage_report(module: torch.nn.Module, start: dict[str, np.ndarray],
                  stage: str) -> dict[str, Any]:
    """The norm of the gradient a stage received (None: none reached it) and whether any of
    its parameters changed."""
    grads = [p.grad for p in module.parameters() if p.grad is not None]
    changed = any(not np.array_equal(start[f"{stage}.{name}"], p.detach().numpy())
                  for name, p in module.named_parameters())
    norm = float(torch.sqrt(torch.stack([(g.double() ** 2).sum() for g in grads]).sum())) \
        if grads else None
    return {"grad": norm, "changed": changed}


def demo_fine_tune(api: Api, pick: Pick, case: Case) -> dict[str, Any]:
    """Part 5: freeze, one step; the gradient each stage received and what changed."""
    freeze, step = pick("freeze_encoder", "fine_tune")
    model = build_model(case)
    (x, y), start = batches_of(case)[0], read_params(model)
    _, raised = api.call(freeze, model)
    if raised is None:
        _, raised = api.call(step, model, x, y, case["extra"]["lr"])
    return {"raised": as_dict(raised),
            "stages": {stage: _stage_report(module, start, stage)
                       for stage, module in model.named_children()}}
