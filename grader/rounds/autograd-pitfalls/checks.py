"""Autograd pitfalls, judge side: the cases, the truth, the known wrong fixes, the special judges
and the follow-ups' evidence.

Every part here is a piece of training code. A check sends cases (a small seeded model's
parameters, batches, settings) to a run of probes.py, which calls the candidate's functions and
observes plain data: parameters, gradients, losses, and what autograd recorded or kept alive.
The truth is the same run made here, in the judge, on the reference; a known wrong fix is the
same run on that wrong code (the pristine stub is one of them: its bug is a known mistake too).
Nothing in this module runs beside candidate code.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Sequence
from dataclasses import replace
from functools import cache
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

import numpy as np
import torch

from grader.round_api.judge import (
    Api,
    Case,
    Round,
    TorchBackend,
    drawn_sizes,
    error_topic,
    fill,
    followups,
    load_module,
    load_reference_part,
    tree_matches,
)

ROUND = Round.load(Path(__file__).resolve().parent)
PROBES = load_module(ROUND, "probes")
FLAVOR = "torch"
Tree = Any

# --- running the probes' runs here, on the reference, the stub or a known wrong fix -----------


@cache
def reference(part_id: str) -> ModuleType:
    return load_reference_part(ROUND, ROUND.part(part_id), FLAVOR)


@cache
def stub(part_id: str) -> ModuleType:
    """The pristine stub of a part as a module: its one bug is a known mistake."""
    path = ROUND.stubs_dir(FLAVOR) / ROUND.part(part_id).file
    module = ModuleType(f"autograd_pitfalls_stub_{part_id}")
    module.__file__ = str(path)
    exec(compile(path.read_text(), str(path), "exec"), module.__dict__)
    return module


def observe(code: Any, case: Case) -> dict[str, Any]:
    """The case's run (probes.py) on `code`, anything with the part's functions."""
    api = Api(code, TorchBackend(), Path(__file__).resolve().parent, PROBES)
    return api.helper(case.extra["run"])(api, case.data())


def outcome_of(code: Any, case: Case) -> Tree:
    """What a run observed, or {"raised": ...} when it raised."""
    run = observe(code, case)
    return run["value"] if run["raised"] is None else {"raised": run["raised"]}


_TRUTHS: dict[int, tuple[weakref.ref[Case], Tree]] = {}


def truth(case: Case) -> Tree:
    """The reference's observation of the case, computed once while the case lives."""
    key = id(case)
    found = _TRUTHS.get(key)
    if found is None or found[0]() is not case:
        found = (weakref.ref(case, lambda _: _TRUTHS.pop(key, None)),
                 outcome_of(reference(case.extra["part"]), case))
        _TRUTHS[key] = found
    return found[1]


def variant(part_id: str, **replaced: Callable[..., Any]) -> SimpleNamespace:
    """The reference's functions of a part with some replaced by a known wrong version."""
    module = reference(part_id)
    names = {n: getattr(module, n) for n in ROUND.part(part_id).functions}
    return SimpleNamespace(**{**names, **replaced})


# --- the cases: small seeded models, batches and settings ---------------------------------------

MLP = {"hidden": ["linear", "tanh"], "output": ["linear"]}
TWO_HEADS = {"trunk": ["linear", "tanh"], "head_a": ["linear"], "head_b": ["linear"]}
ENCODER = {"encoder": ["linear", "tanh"], "adapter": ["linear", "tanh"], "head": ["linear"]}
DTYPES = ("float64", "float32")


def _linear(rng: np.random.Generator, inputs: dict[str, np.ndarray], name: str, fan_in: int,
            fan_out: int, dtype: str) -> None:
    inputs[f"{name}.weight"] = (rng.standard_normal((fan_out, fan_in)) / np.sqrt(fan_in)
                                ).astype(dtype)
    inputs[f"{name}.bias"] = (0.1 * rng.standard_normal(fan_out)).astype(dtype)


def _batches(rng: np.random.Generator, inputs: dict[str, np.ndarray], count: int,
             size: int | Sequence[int], width_in: int, width_out: int, dtype: str) -> None:
    """`count` batches (x, y) of `size` rows each, or of the sizes listed, one per batch."""
    sizes = [size] * count if isinstance(size, int) else list(size)
    for i, rows in enumerate(sizes):
        inputs[f"x{i}"] = rng.standard_normal((rows, width_in)).astype(dtype)
        inputs[f"y{i}"] = rng.standard_normal((rows, width_out)).astype(dtype)


def mlp_case(rng: np.random.Generator, part: str, run: str, d: int, h: int, o: int,
             b: int | Sequence[int], batches: int, dtype: str, **settings: Any) -> Case:
    """A Linear-Tanh-Linear model (d -> h -> o) and `batches` batches of b rows (or of the
    sizes b lists)."""
    inputs: dict[str, np.ndarray] = {}
    _linear(rng, inputs, "hidden.0", d, h, dtype)
    _linear(rng, inputs, "output.0", h, o, dtype)
    _batches(rng, inputs, batches, b, d, o, dtype)
    dims = (("D", d), ("H", h), ("batches", batches), *((k, v) for k, v in settings.items()
                                                       if k == "steps"))
    return Case(inputs, dims, dtype, extra={"part": part, "run": run, "layout": "chain",
                                            "stages": MLP, "batches": batches, **settings})


def malformed(case: Case, label: str, **changes: Any) -> Case:
    """A copy of a valid case with settings or inputs changed so that it must raise
    ValueError."""
    inputs = {k: v for k, v in case.inputs.items() if k not in changes.get("drop", ())}
    inputs.update(changes.get("inputs", {}))
    extra = {**case.extra, **changes.get("extra", {}), "malformed": True}
    return Case(inputs, case.dims, case.dtype, label=label, extra=extra)


TRAIN_SHAPES = ((3, 4, 2, 5, 1, 2), (2, 3, 1, 4, 2, 3), (4, 6, 3, 8, 3, 5), (1, 2, 1, 3, 1, 4),
                (5, 4, 2, 6, 2, 6), (3, 8, 4, 2, 3, 3))
"""(D, H, O, rows per batch, batches, steps)."""


def _train_case(rng: np.random.Generator, shape: tuple[int, ...], dtype: str) -> Case:
    d, h, o, b, batches, steps = shape
    return mlp_case(rng, "part1", "run_train", d, h, o, b, batches, dtype,
                    lr=float(rng.uniform(0.1, 0.3)), steps=steps)


def training_cases(rng: np.random.Generator) -> list[Case]:
    """TRAIN_SHAPES in each dtype, then a float64 run whose widths and rows per batch the
    run's seed draws (drawn_sizes; 2 to 4 outputs, batches and steps): a loop cannot be right
    at the fixed shapes alone."""
    d, h, b = drawn_sizes(rng, 3)
    o, batches, steps = drawn_sizes(rng, 3, (2, 4))
    return [_train_case(rng, shape, dtype) for dtype in DTYPES for shape in TRAIN_SHAPES] + [
        _train_case(rng, (d, h, o, b, batches, steps), "float64")]


def training_and_malformed(rng: np.random.Generator) -> list[Case]:
    """The training cases, the contract's edge among them (steps = 0 is a run of no step,
    valid: only steps < 0 raise), and inputs that must raise."""
    cases = training_cases(rng)
    first = cases[0]
    none = replace(first, extra={**first.extra, "steps": 0},
                   label=f"{first.describe()}, steps = 0")
    return [*cases, none] + [
        malformed(cases[0], "batches is empty", extra={"batches": 0}),
        malformed(cases[0], "lr = 0", extra={"lr": 0.0}),
        malformed(cases[0], "steps = -1", extra={"steps": -1}),
    ]


def stale_cases(rng: np.random.Generator) -> list[Case]:
    """Training cases whose model arrives with gradients left in .grad."""
    return [_arriving_with_grads(rng, _train_case(rng, shape, dtype))
            for dtype in DTYPES for shape in TRAIN_SHAPES[:2]]


def _arriving_with_grads(rng: np.random.Generator, case: Case) -> Case:
    """The case with gradients left in every parameter's .grad as its model arrives (the
    runs give them: probes.give_grads)."""
    stale = {f"stale.{name}": rng.standard_normal(np.shape(value)).astype(case.dtype)
             for name, value in case.inputs.items() if "." in name}
    return replace(case, inputs={**case.inputs, **stale})


def _sgd_case(rng: np.random.Generator, shapes: Sequence[tuple[int, ...]], dtype: str,
              without_grad: Sequence[int] = ()) -> Case:
    inputs = {}
    for i, shape in enumerate(shapes):
        inputs[f"p{i}"] = rng.standard_normal(shape).astype(dtype)
        if i not in without_grad:
            inputs[f"g{i}"] = rng.standard_normal(shape).astype(dtype)
    return Case(inputs, (("params", len(shapes)),), dtype,
                extra={"part": "part2", "run": "run_sgd_update", "params": len(shapes),
                       "lr": float(rng.uniform(0.01, 0.5))})


SGD_SHAPES: tuple[tuple[tuple[int, ...], ...], ...] = (
    ((3,),), ((4, 3), (4,)), ((2, 5), (2,), (1, 2), (1,)), ((),), ((3, 3, 2),), ((6, 1), (1,)),
)


def update_cases(rng: np.random.Generator) -> list[Case]:
    cases = [_sgd_case(rng, shapes, dtype) for dtype in DTYPES for shapes in SGD_SHAPES]
    return cases + [_sgd_case(rng, ((3, 2), (3,), (2,)), "float64", without_grad=(1,))]


def update_and_malformed(rng: np.random.Generator) -> list[Case]:
    cases = update_cases(rng)
    return cases + [malformed(cases[1], "lr = 0", extra={"lr": 0.0}),
                    malformed(cases[1], "lr = -0.1", extra={"lr": -0.1})]


EVAL_SHAPES = ((3, 4, 2, 5, 1), (2, 3, 1, 4, 3), (4, 6, 3, 8, 2), (1, 2, 1, 3, 5),
               (5, 4, 2, 6, 4))
"""(D, H, O, rows per batch, batches)."""


UNEQUAL_BATCHES = (2, 5, 9)
"""Rows per batch of one evaluation case: the mean over batches of each batch's mean differs
from the mean over every row pooled only where the batches' sizes differ."""


def _eval_cases(rng: np.random.Generator, run: str) -> list[Case]:
    cases = [mlp_case(rng, "part3", run, d, h, o, b, n, dtype, lr=float(rng.uniform(0.1, 0.3)))
             for dtype in DTYPES for d, h, o, b, n in EVAL_SHAPES]
    unequal = mlp_case(rng, "part3", run, 3, 4, 2, UNEQUAL_BATCHES, len(UNEQUAL_BATCHES),
                       "float64", lr=0.2)
    return cases + [replace(unequal, label=f"{unequal.describe()}, batches of "
                                           f"{', '.join(map(str, UNEQUAL_BATCHES))} rows"),
                    malformed(cases[0], "batches is empty", extra={"batches": 0})]


def evaluate_cases(rng: np.random.Generator) -> list[Case]:
    """Models in training mode, and one that arrives in evaluation mode: its mode too is the
    caller's to keep (a model.train() at the end is no restore)."""
    cases = _eval_cases(rng, "run_evaluate")
    arrives = mlp_case(rng, "part3", "run_evaluate", 3, 4, 2, 5, 3, "float64", mode="eval")
    return cases + [Case(arrives.inputs, arrives.dims, arrives.dtype, extra=arrives.extra,
                         label="a model that arrives in evaluation mode")]


def recording_cases(rng: np.random.Generator) -> list[Case]:
    """One case per dtype, of shapes the seed draws from the evaluation's own (EVAL_SHAPES):
    inputs of shapes of their own would tell this check's calls apart from evaluate's, and
    code could record no graph only where it is watched."""
    picks = rng.choice(len(EVAL_SHAPES), size=len(DTYPES), replace=False)
    return [mlp_case(rng, "part3", "run_evaluate", *EVAL_SHAPES[pick], dtype)
            for pick, dtype in zip(picks, DTYPES, strict=True)]


def running_cases(rng: np.random.Generator) -> list[Case]:
    """The evaluation shapes, one model that arrives with gradients in .grad (each step clears
    them before its backward, as train does), and lr = 0."""
    cases = _eval_cases(rng, "run_running_loss")
    stale = _arriving_with_grads(rng, cases[0])
    return cases + [replace(stale, label=f"{stale.describe()}, gradients already in .grad"),
                    malformed(cases[1], "lr = 0", extra={"lr": 0.0})]


MEMORY_BATCHES = 12


def memory_cases(rng: np.random.Generator) -> list[Case]:
    return [mlp_case(rng, "part3", "run_running_loss", 3, 4, 2, 4, MEMORY_BATCHES, dtype,
                     lr=0.1) for dtype in DTYPES]


def heads_case(rng: np.random.Generator, d: int, h: int, oa: int, ob: int, b: int, dtype: str,
               stale: bool = False) -> Case:
    """A trunk (d -> h, Tanh) with two Linear heads (h -> oa, h -> ob) and a batch x."""
    inputs: dict[str, np.ndarray] = {}
    _linear(rng, inputs, "trunk.0", d, h, dtype)
    _linear(rng, inputs, "head_a.0", h, oa, dtype)
    _linear(rng, inputs, "head_b.0", h, ob, dtype)
    if stale:
        inputs.update({f"grad.{name}": rng.standard_normal(v.shape).astype(dtype)
                       for name, v in list(inputs.items())})
    inputs["x"] = rng.standard_normal((b, d)).astype(dtype)
    return Case(inputs, (("D", d), ("H", h), ("B", b)), dtype,
                extra={"part": "part4", "run": "run_two_heads", "layout": "two-heads",
                       "stages": TWO_HEADS})


HEADS_SHAPES = ((3, 4, 2, 2, 5), (2, 3, 1, 3, 4), (4, 6, 3, 1, 8), (1, 2, 1, 1, 3),
                (5, 4, 2, 2, 6))
"""(D, H, width of head a, width of head b, rows)."""


def heads_cases(rng: np.random.Generator) -> list[Case]:
    cases = [heads_case(rng, *shape, dtype) for dtype in DTYPES for shape in HEADS_SHAPES]
    return cases + [heads_case(rng, *HEADS_SHAPES[0], dtype, stale=True) for dtype in DTYPES]


def heads_and_malformed(rng: np.random.Generator) -> list[Case]:
    cases = heads_cases(rng)
    return cases + [
        malformed(cases[0], "x is 1-D", inputs={"x": cases[0]["x"][0]}),
        malformed(cases[0], "x is 3-D", inputs={"x": cases[0]["x"][None]}),
    ]


def one_heads_case(rng: np.random.Generator) -> Case:
    return heads_case(rng, *HEADS_SHAPES[0], "float64")


def encoder_case(rng: np.random.Generator, d: int, e: int, a: int, o: int, b: int, dtype: str,
                 steps: int) -> Case:
    """An encoder (d -> e, Tanh), an adapter (e -> a, Tanh), a head (a -> o), one batch."""
    inputs: dict[str, np.ndarray] = {}
    _linear(rng, inputs, "encoder.0", d, e, dtype)
    _linear(rng, inputs, "adapter.0", e, a, dtype)
    _linear(rng, inputs, "head.0", a, o, dtype)
    _batches(rng, inputs, 1, b, d, o, dtype)
    return Case(inputs, (("D", d), ("E", e), ("A", a), ("steps", steps)), dtype,
                extra={"part": "part5", "run": "run_fine_tune", "layout": "chain",
                       "stages": ENCODER, "batches": 1, "steps": steps,
                       "lr": float(rng.uniform(0.1, 0.3))})


ENCODER_SHAPES = ((3, 4, 3, 2, 5), (2, 3, 2, 1, 4), (4, 6, 5, 3, 8), (1, 2, 2, 1, 3),
                  (5, 4, 3, 2, 6))
"""(D, encoder width, adapter width, O, rows)."""


def step_cases(rng: np.random.Generator) -> list[Case]:
    cases = [encoder_case(rng, *shape, dtype, steps=1) for dtype in DTYPES
             for shape in ENCODER_SHAPES]
    return cases + [malformed(cases[0], "x and y hold different numbers of rows",
                              inputs={"y0": cases[0]["y0"][:-1]})]


def fine_tune_cases(rng: np.random.Generator) -> list[Case]:
    return [encoder_case(rng, *shape, dtype, steps=steps) for dtype in DTYPES
            for shape, steps in zip(ENCODER_SHAPES, (2, 3, 1, 3, 2), strict=True)]


# --- the known wrong fixes ----------------------------------------------------------------------
#
# An `output` mistake (checks.toml) is a function case -> what that wrong code observes; a
# `match` mistake is a function (case, what the candidate's run observed) -> bool. A run that
# raised is observed as {"raised": {...}}.


def _sgd_loop(order: str) -> Callable[..., list[float]]:
    """Part 1's loop with zero_grad, backward and step in the `order` given (a known
    wrong fix when it is not zero backward step)."""

    def train(model: Any, batches: Any, lr: float, steps: int) -> list[float]:
        optimizer = torch.optim.SGD(model.parameters(), lr=lr)
        losses = []
        for step in range(steps):
            x, y = batches[step % len(batches)]
            losses.append(_sgd_step(model, optimizer, x, y, order))
        return losses

    return train


def _running_loop(order: str) -> Callable[..., float]:
    """Part 3's running_loss with zero_grad, backward and step in the `order` given."""

    def running_loss(model: Any, batches: Any, lr: float) -> float:
        optimizer = torch.optim.SGD(model.parameters(), lr=lr)
        return sum(_sgd_step(model, optimizer, x, y, order) for x, y in batches) / len(batches)

    return running_loss


def _sgd_step(model: Any, optimizer: Any, x: Any, y: Any, order: str) -> float:
    """One step of the loops above, its calls in `order`; the step's loss."""
    loss = torch.nn.functional.mse_loss(model(x), y)
    for call in order.split():
        {"zero": optimizer.zero_grad, "backward": loss.backward, "step": optimizer.step}[call]()
    return float(loss.item())


def part1_stub(case: Case) -> Tree:
    return outcome_of(stub("part1"), case)


def zeroed_at_end(case: Case) -> Tree:
    """The loop of the case's part (train's, or running_loss's) zeroing after step()."""
    if case.extra["part"] == "part3":
        return outcome_of(variant("part3", running_loss=_running_loop("backward step zero")),
                          case)
    return outcome_of(variant("part1", train=_sgd_loop("backward step zero")), case)


def raised_topic(actual: Tree) -> str | None:
    """The round's topic about the error a run raised (the `matches` of topics/*.md)."""
    if not isinstance(actual, dict) or "raised" not in actual:
        return None
    topic = error_topic(ROUND, actual["raised"]["message"])
    return topic.name if topic else None


def no_graph_error(case: Case, actual: Tree) -> bool:
    return raised_topic(actual) == "no-graph"


def version_error(case: Case, actual: Tree) -> bool:
    return raised_topic(actual) == "version-counter"


def leaf_inplace_error(case: Case, actual: Tree) -> bool:
    return raised_topic(actual) == "leaf-inplace"


def second_backward_error(case: Case, actual: Tree) -> bool:
    return raised_topic(actual) == "graph-freed"


def _observed(actual: Tree, key: str) -> Any:
    return actual.get(key) if isinstance(actual, dict) and "raised" not in actual else None


def nothing_learned(case: Case, actual: Tree) -> bool:
    """Every parameter still holds its starting value."""
    params = _observed(actual, "params")
    return params is not None and all(
        np.array_equal(np.asarray(params[name]), case[name]) for name in params)


def _updated(case: Case) -> list[int]:
    return [i for i in range(case.extra["params"]) if f"g{i}" in case.inputs]


def _any_off(actual: Tree, key: str, indices: Sequence[int], want: float) -> bool:
    values = _observed(actual, key)
    return values is not None and any(values[i] != want for i in indices)


def data_assigned(case: Case, actual: Tree) -> bool:
    """The parameters moved to new memory (p.data = ...)."""
    return _any_off(actual, "same memory", range(case.extra["params"]), 1.0)


def data_written(case: Case, actual: Tree) -> bool:
    """The right values, but the version counter never moved: written through .data."""
    params = _observed(actual, "params")
    return params is not None and _any_off(actual, "version counter moved", _updated(case),
                                           1.0) and tree_matches(params, truth(case)["params"],
                                                                 case.dtype)


def not_in_place(case: Case, actual: Tree) -> bool:
    """The caller's tensors never changed (a rebound name, new tensors in a list)."""
    params = _observed(actual, "params")
    return params is not None and all(np.array_equal(np.asarray(params[i]), case[f"p{i}"])
                                      for i in _updated(case))


def requires_grad_dropped(case: Case, actual: Tree) -> bool:
    return _any_off(actual, "requires grad", range(case.extra["params"]), 1.0)


def graph_attached(case: Case, actual: Tree) -> bool:
    return _any_off(actual, "graph attached", range(case.extra["params"]), 0.0) or _any_off(
        actual, "leaf", range(case.extra["params"]), 1.0)


def gradients_touched(case: Case, actual: Tree) -> bool:
    return _any_off(actual, "gradients unchanged", range(case.extra["params"]), 1.0)


def part3_stub(case: Case) -> Tree:
    return outcome_of(stub("part3"), case)


def returns_tensor(case: Case, actual: Tree) -> bool:
    """A tensor without a graph came back where a float was asked for."""
    return _observed(actual, "returns a float") == 0.0 and _observed(
        actual, "result carries a graph") == 0.0


def losses_as_tensors(case: Case, actual: Tree) -> bool:
    """Losses came back as tensors (or ints) where floats were asked for."""
    return _observed(actual, "losses are floats") == 0.0


def mode_switched_only(case: Case, actual: Tree) -> bool:
    """model.eval() was called, and autograd went on recording."""
    return bool(_observed(actual, "graphs recorded")) and _observed(
        actual, "training mode kept") == 0.0


def losses_kept(case: Case, actual: Tree) -> bool:
    """A float came back, but earlier steps' graphs were still alive at the last step."""
    alive = _observed(actual, "earlier graphs alive at the last step")
    return alive is not None and alive > 2 and _observed(actual, "result carries a graph") == 0.0


TRUNK_WEIGHT = "trunk.0.weight"


class _Weighted:
    """Part 4 with the two losses weighted (wa * loss_a + wb * loss_b), optionally with the
    trunk cut off from one head: what double counting or a missing head computes."""

    def __init__(self, wa: float, wb: float, cut_b: bool = False) -> None:
        self.wa, self.wb, self.cut_b = wa, wb, cut_b

    def two_heads_backward(self, model: Any, x: torch.Tensor) -> tuple[float, float]:
        h = model.trunk(x)
        loss_a = model.head_a(h).pow(2).mean()
        loss_b = (model.head_b(h.detach() if self.cut_b else h) - 1).pow(2).mean()
        (self.wa * loss_a + self.wb * loss_b).backward()
        return loss_a.item(), loss_b.item()


def _grads_match(case: Case, actual: Tree, code: Any) -> bool:
    """Whether the gradients observed (every parameter's, or the trunk weight's alone, as the
    finite-difference check reads it) are those `code` computes."""
    grads = {TRUNK_WEIGHT: actual} if isinstance(actual, np.ndarray) else _observed(actual,
                                                                                  "grads")
    if grads is None:
        return False
    theirs = outcome_of(code, case)["grads"]
    return tree_matches(grads, {k: theirs[k] for k in grads}, case.dtype)


def counted_twice(case: Case, actual: Tree) -> bool:
    """One of the losses backpropagated twice through a retained graph."""
    return any(_grads_match(case, actual, _Weighted(*w)) for w in ((2, 1), (1, 2)))


def one_head_only(case: Case, actual: Tree) -> bool:
    """The gradients of one loss alone, or the trunk cut off from head b."""
    return any(_grads_match(case, actual, code)
               for code in (_Weighted(1, 0), _Weighted(0, 1), _Weighted(1, 1, cut_b=True)))


def grads_overwritten(case: Case, actual: Tree) -> bool:
    """The right gradient written over .grad instead of added to it."""
    grads = _observed(actual, "grads")
    if grads is None or not any(k.startswith("grad.") for k in case.inputs):
        return False
    fresh = Case({k: v for k, v in case.inputs.items() if not k.startswith("grad.")},
                 case.dims, case.dtype, extra=case.extra)
    return tree_matches(grads, truth(fresh)["grads"], case.dtype)


def retained_last(case: Case, actual: Tree) -> bool:
    return _observed(actual, "last backward keeps the graph") == 1.0


def part5_stub(case: Case) -> Tree:
    return outcome_of(stub("part5"), case)


def _by_stage(actual: Tree, key: str, stage: str) -> list[float]:
    values = _observed(actual, key) or {}
    return [v for name, v in values.items() if name.startswith(stage + ".")]


def encoder_trains(case: Case, actual: Tree) -> bool:
    return any(v == 1.0 for v in _by_stage(actual, "changed", "encoder"))


def encoder_not_frozen(case: Case, actual: Tree) -> bool:
    """freeze_encoder left a parameter of the encoder requiring grad, and froze nothing else
    (`encoder.eval()`, or nothing at all)."""
    key = "requires grad after freeze_encoder"
    return _observed(actual, key) is not None and \
        any(v == 1.0 for v in _by_stage(actual, key, "encoder")) and \
        not any(v == 0.0 for s in ("adapter", "head") for v in _by_stage(actual, key, s))


def wrong_module_frozen(case: Case, actual: Tree) -> bool:
    """freeze_encoder froze a parameter of the adapter or the head."""
    key = "requires grad after freeze_encoder"
    return _observed(actual, key) is not None and \
        any(v == 0.0 for s in ("adapter", "head") for v in _by_stage(actual, key, s))


def everything_frozen(case: Case, actual: Tree) -> bool:
    """The optimizer got no parameter at all: the whole model was frozen."""
    return isinstance(actual, dict) and "raised" in actual and \
        "empty parameter list" in actual["raised"]["message"]


def trainable_list_wrong(case: Case, actual: Tree) -> bool:
    key = "returned as trainable by freeze_encoder"
    return _observed(actual, key) is not None and _observed(actual, key) != truth(case)[key]


def stepped_without(case: Case, actual: Tree) -> bool:
    """A parameter that should have changed has a gradient after the steps and did not change:
    backward reached it, the optimizer never stepped it."""
    changed, graded = _observed(actual, "changed"), _observed(actual, "has a gradient")
    if not isinstance(changed, dict) or not isinstance(graded, dict):
        return False
    return any(should and not changed.get(name) and graded.get(name)
               for name, should in truth(case)["changed"].items())


# --- the finite differences' loss ----------------------------------------------------------------


def heads_loss(inputs: dict[str, np.ndarray]) -> float:
    """loss_a + loss_b of Part 4 as a function of a case's arrays (the finite differences'
    loss)."""
    model = PROBES.build_model({"inputs": inputs, "extra": {"layout": "two-heads",
                                                            "stages": TWO_HEADS}})
    with torch.no_grad():
        h = model.trunk(torch.from_numpy(inputs["x"]))
        total = model.head_a(h).pow(2).mean() + (model.head_b(h) - 1).pow(2).mean()
    return float(total)


# --- the interviewer's follow-ups ----------------------------------------------------------------


def _source(part_id: str) -> str:
    return (ROUND.stubs_dir(FLAVOR) / ROUND.part(part_id).file).read_text()


def _demo_args(part_id: str, demo: str, **data: Any) -> dict[str, Any]:
    return {"demo": demo, "source": _source(part_id), **data}


def followup_part1_args(seed: int) -> dict[str, Any]:
    case = mlp_case(np.random.default_rng(0), "part1", "run_train", 3, 4, 2, 8, 2, "float64",
                    lr=0.2, steps=5)
    return _demo_args("part1", "demo_train", case=case.data())


def followup_part2_args(seed: int) -> dict[str, Any]:
    case = mlp_case(np.random.default_rng(0), "part2", "run_train", 3, 4, 2, 8, 1, "float64",
                    lr=0.1)
    return _demo_args("part2", "demo_sgd_update", case=case.data(), watched="output.0.weight")


FOLLOWUP_BATCHES = (4, 16, 64)


def followup_part3_args(seed: int) -> dict[str, Any]:
    rng = np.random.default_rng(0)
    cases = [mlp_case(rng, "part3", "run_running_loss", 3, 4, 2, 4, n, "float64", lr=0.1)
             for n in FOLLOWUP_BATCHES]
    return _demo_args("part3", "demo_memory", cases=[c.data() for c in cases])


def followup_part4_args(seed: int) -> dict[str, Any]:
    case = one_heads_case(np.random.default_rng(0))
    return _demo_args("part4", "demo_two_heads", case=case.data())


def followup_part5_args(seed: int) -> dict[str, Any]:
    case = encoder_case(np.random.default_rng(0), 3, 4, 3, 2, 6, "float64", steps=1)
    return _demo_args("part5", "demo_fine_tune", case=case.data())


def _numbers(values: Sequence[float]) -> str:
    return ", ".join(f"{v:.3g}" for v in values)


def _evidence(part_id: str, data: dict[str, Any], values: dict[str, Any],
              answer: Sequence[str] = ("answer",),
              shown: Sequence[str] = ()) -> dict[str, Any]:
    """The demonstration's evidence: the observation (the follow-up's `## observed` section,
    filled) shown before the question, the answer's pieces, and the stub's own error under
    each snippet section named in `shown`."""
    doc = followups(ROUND)[part_id]
    stub_run = data["baseline"]
    runs = [{"title": doc.text("stub title"), "snippet": doc.text(name),
             "raised": stub_run["raised"], "line": ""} for name in shown if stub_run["raised"]]
    return {"status": "demonstrated", "note": fill(doc.text("observed"), values) or "",
            "values": values, "answer": list(answer), "shown": runs}


def _unavailable(data: dict[str, Any]) -> dict[str, Any] | None:
    """Why a demonstration could not be made (the stub's run failed, or the candidate's code
    raised), or None."""
    from grader.round_api.judge import unavailable

    if data["baseline"] is None:
        return unavailable(data["baseline_error"])
    if data["yours"].get("raised"):
        return unavailable(data["yours"]["raised"]["message"])
    return None


def interpret_part1(data: dict[str, Any]) -> dict[str, Any]:
    stub_run, yours = data["baseline"], data["yours"]
    return _unavailable(data) or _evidence("part1", data, {
        "steps": len(yours["norms"]), "stub_norms": _numbers(stub_run["norms"]),
        "your_norms": _numbers(yours["norms"]), "stub_losses": _numbers(stub_run["losses"]),
        "your_losses": _numbers(yours["losses"])})


def interpret_part2(data: dict[str, Any]) -> dict[str, Any]:
    yours = data["yours"]
    noticed = yours.get("stale") is not None and "modified by an inplace operation" in \
        yours["stale"]["message"]
    before, after = yours["versions"]
    return _unavailable(data) or _evidence(
        "part2", data, {"before": before, "after": after},
        answer=("answer", "noticed" if noticed else "hidden"), shown=("stub snippet",))


def _column(rows: Sequence[dict[str, Any]], key: str) -> str:
    return ", ".join(str(r[key]) for r in rows)


def interpret_part3(data: dict[str, Any]) -> dict[str, Any]:
    stub_rows, rows = data["baseline"]["rows"], data["yours"]["rows"]
    return _unavailable(data) or _evidence("part3", data, {
        "batches": _column(rows, "batches"), "stub_alive": _column(stub_rows, "alive"),
        "your_alive": _column(rows, "alive"), "stub_saved": _column(stub_rows, "saved"),
        "your_saved": _column(rows, "saved")})


def interpret_part4(data: dict[str, Any]) -> dict[str, Any]:
    kept = data["yours"]["kept"]
    case = one_heads_case(np.random.default_rng(0))
    right = tree_matches(data["yours"]["grads"], truth(case)["grads"], "float64")
    return _unavailable(data) or _evidence("part4", data, {
        "runs": len(kept), "kept": ", then ".join("kept" if k else "freed" for k in kept),
        "verdict": "equal" if right else "do not equal"}, shown=("stub snippet",))


def _stages(run: dict[str, Any], test: Callable[[dict[str, Any]], bool]) -> str:
    return ", ".join(s for s, r in run["stages"].items() if test(r)) or "none"


def interpret_part5(data: dict[str, Any]) -> dict[str, Any]:
    stub_run, yours = data["baseline"], data["yours"]
    return _unavailable(data) or _evidence("part5", data, {
        "stub_changed": _stages(stub_run, lambda r: r["changed"]),
        "stub_no_grad": _stages(stub_run, lambda r: r["grad"] is None),
        "your_changed": _stages(yours, lambda r: r["changed"]),
        "your_no_grad": _stages(yours, lambda r: r["grad"] is None)})

