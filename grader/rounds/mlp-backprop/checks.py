"""MLP backprop, judge side: the inputs, the truth (torch autograd in float64, computed here and
never beside candidate code), the known mistakes, and the special judges.

checks.toml names everything here that a check uses. Every truth is computed from the case's
own values in float64: the forward with numpy, every gradient and the training trajectory with
torch autograd on the same network, so the references in reference/mlp-backprop/ are graded
against an independent yardstick.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from grader.round_api.judge import (
    Case,
    Context,
    Plan,
    Verdict,
    backward_sizes,
    drawn_sizes,
    failed,
    held_size,
    mismatched_inputs,
    passed,
    raised_verdict,
    tree_difference,
    tree_matches,
)

PARAMS = ("W1", "b1", "W2", "b2")
Tree = dict[str, Any]

# --- inputs -------------------------------------------------------------------------------------
#
# A network case holds the four parameters, X and an upstream dlogits; its sizes are B (batch),
# D (D_in), H (hidden) and C (classes). Weights are scaled by 1/sqrt(fan_in) so that the values
# stay near 1 at every layer. The first shapes are square (D = H = C), where a transposed weight
# gradient or a mask multiplied on the wrong side of W2 still has the right shape and shows up
# as wrong values rather than as a shape error.

NETWORK_SHAPES: tuple[tuple[int, int, int, int], ...] = (
    (4, 5, 5, 5), (3, 4, 4, 4), (1, 1, 1, 1), (2, 3, 4, 2), (5, 4, 6, 3), (8, 5, 3, 4),
    (16, 8, 16, 10), (6, 7, 5, 5), (3, 1, 8, 2), (10, 6, 4, 7), (1, 3, 5, 4), (7, 2, 9, 3),
)
LOSS_SHAPES: tuple[tuple[int, int], ...] = (
    (1, 1), (1, 2), (2, 3), (4, 2), (5, 5), (8, 10), (16, 3), (3, 7), (32, 4), (7, 1), (6, 6),
)
DTYPES = ("float64", "float32")


def network_case(rng: np.random.Generator, b: int, d: int, h: int, c: int,
                 dtype: str = "float64") -> Case:
    inputs = {
        "W1": rng.standard_normal((d, h)) / np.sqrt(d), "b1": 0.3 * rng.standard_normal(h),
        "W2": rng.standard_normal((h, c)) / np.sqrt(h), "b2": 0.3 * rng.standard_normal(c),
        "X": rng.standard_normal((b, d)), "dlogits": rng.standard_normal((b, c)) / b,
    }
    return Case({k: v.astype(dtype) for k, v in inputs.items()},
                (("B", b), ("D", d), ("H", h), ("C", c)), dtype)


def networks(rng: np.random.Generator) -> list[Case]:
    """Every network shape in each float dtype (float64 first), then one per dtype whose sizes
    the run's seed draws (drawn_sizes): code cannot be right at the fixed shapes alone."""
    fixed = [network_case(rng, *shape, dtype) for dtype in DTYPES for shape in NETWORK_SHAPES]
    b, d, h, c = drawn_sizes(rng, 4)
    return fixed + [network_case(rng, b, d, h, c, dtype) for dtype in DTYPES]


def one_network(rng: np.random.Generator) -> Case:
    return network_case(rng, 4, 3, 5, 3)


def one_network_float32(rng: np.random.Generator) -> Case:
    return network_case(rng, 4, 3, 5, 3, "float32")


def kink_case(rng: np.random.Generator, b: int, d: int, h: int, c: int, dtype: str) -> Case:
    """A network with pre-activations that are exactly 0.0, in float32 as in float64.

    X holds small integers and W1 multiples of 1/2, so every product and sum is exact in any
    order; each unit's bias cancels that unit's value on one example. Where z == 0 the gate
    z > 0 is closed (torch.relu's backward) and z >= 0 is open: those entries are the test.
    """
    case = network_case(rng, b, d, h, c, dtype)
    X = rng.integers(-2, 3, size=(b, d)).astype(np.float64)
    W1 = rng.integers(-2, 3, size=(d, h)) / 2.0
    on = rng.integers(0, b, size=h)
    b1 = -np.einsum("ud,du->u", X[on], W1)
    return Case({**case.inputs, "X": X.astype(dtype), "W1": W1.astype(dtype),
                 "b1": b1.astype(dtype)}, case.dims, dtype)


def kinks(rng: np.random.Generator) -> list[Case]:
    shapes = ((6, 2, 4, 4), (4, 3, 5, 3), (3, 4, 6, 2))  # square first, as in NETWORK_SHAPES
    return [kink_case(rng, *shape, dtype) for dtype in DTYPES for shape in shapes]


NETWORK_SIGNATURE = {"X": "BD", "W1": "DH", "b1": "H", "W2": "HC", "b2": "C"}
"""The forward's shape contract, by named size."""


def malformed_networks(rng: np.random.Generator) -> list[Case]:
    """Parameters or X whose shapes do not fit (B=4, D=3, H=5, C=2 otherwise)."""
    good = network_case(rng, 4, 3, 5, 2).inputs
    bad: dict[str, dict[str, np.ndarray]] = {
        "X is 1-D": {"X": np.ones(3)},
        "X is 3-D": {"X": np.ones((4, 3, 1))},
        "X has 4 features, W1 expects 3": {"X": np.ones((4, 4))},
        "W1 is 1-D": {"W1": np.ones(3)},
        "b1 has 4 entries for 5 hidden units": {"b1": np.ones(4)},
        "b1 is (1, 5)": {"b1": np.ones((1, 5))},
        "W2 has 6 rows for 5 hidden units": {"W2": np.ones((6, 2))},
        "b2 has 3 entries for 2 classes": {"b2": np.ones(3)},
    }
    listed = list(bad.items())
    listed += mismatched_inputs(good, NETWORK_SIGNATURE, ranks=("X", "W1", "W2"),
                                listed=[changes for _, changes in listed])
    return [Case({**good, **changes}, label=label) for label, changes in listed]


def malformed_dlogits(rng: np.random.Generator) -> list[Case]:
    """Well-formed networks (B=4, C=3) with a dlogits of the wrong shape."""
    good = network_case(rng, 4, 3, 5, 3).inputs
    shapes = {"dlogits has 5 rows for a batch of 4": (5, 3),
              "dlogits has 2 columns for 3 classes": (4, 2),
              "dlogits is 1-D": (12,), "dlogits is (4, 3, 1)": (4, 3, 1)}
    return [Case({**good, "dlogits": np.ones(shape)}, label=label)
            for label, shape in shapes.items()]


def loss_case(rng: np.random.Generator, b: int, c: int, dtype: str = "float64") -> Case:
    return Case({"logits": (3 * rng.standard_normal((b, c))).astype(dtype),
                 "y": rng.integers(0, c, size=b)}, (("B", b), ("C", c)), dtype)


def losses(rng: np.random.Generator) -> list[Case]:
    """Every shape in both dtypes, and labels as int32 once: any integer labels are labels
    (a check of `y.dtype == int64` rejects valid input)."""
    narrow = loss_case(rng, 5, 4)
    return [loss_case(rng, b, c, dtype) for dtype in DTYPES for b, c in LOSS_SHAPES] + [
        Case({**narrow.inputs, "y": narrow["y"].astype(np.int32)}, narrow.dims, narrow.dtype,
             label="B=5, C=4, float64, labels int32")] + [
        loss_case(rng, b, c, dtype) for b, c in [drawn_sizes(rng, 2)] for dtype in DTYPES]


def one_loss(rng: np.random.Generator) -> Case:
    return loss_case(rng, 3, 4)


def one_loss_float32(rng: np.random.Generator) -> Case:
    return loss_case(rng, 5, 4, "float32")


CPU_GROWTH_C = 64
"""About part2.by_hand's classes (held_size draws them near it): each row's softmax then does enough
work to stand above a process's noise at the middle batch."""
CPU_GROWTH_NETWORK = {"B": 64, "D": 64, "C": 16}
"""About part3.by_hand's batch, input width and classes (held_size draws each near it), about as
many multiply-adds per hidden unit as a small layer of a real network."""


def cpu_batches(rng: np.random.Generator) -> list[Case]:
    """part2.by_hand's sizes, one process each (backward_sizes): a batch of B = 1, then a middle
    and a large B, of CPU_GROWTH_C classes."""
    classes = held_size(rng, CPU_GROWTH_C)
    return [loss_case(rng, b, classes) for b in backward_sizes(rng)]


def cpu_widths(rng: np.random.Generator) -> list[Case]:
    """part3.by_hand's sizes, one process each (backward_sizes): a hidden width of H = 1, then
    a middle and a large H, the rest CPU_GROWTH_NETWORK."""
    shape = {name: held_size(rng, near) for name, near in CPU_GROWTH_NETWORK.items()}
    return [network_case(rng, shape["B"], shape["D"], h, shape["C"])
            for h in backward_sizes(rng)]


def malformed_labels(rng: np.random.Generator) -> list[Case]:
    logits = rng.standard_normal((4, 3))
    bad = {
        "a label equal to C (3 classes, label 3)": (logits, np.array([0, 3, 1, 2])),
        "a negative label (-1)": (logits, np.array([0, -1, 1, 2])),
        "y is (B, 1)": (logits, np.array([[0], [1], [2], [1]])),
        "y has 5 labels for 4 rows": (logits, np.array([0, 1, 2, 1, 0])),
        "logits is 1-D": (np.ones(3), np.array([1])),
        "logits is 3-D": (np.ones((4, 3, 1)), np.array([0, 1, 2, 1])),
    }
    return [Case({"logits": lg, "y": y}, label=label) for label, (lg, y) in bad.items()]


# The stability rows: each one breaks a different shortcut (see stability_hint).
STABLE_LOGITS = np.array([
    [1e4, 0.0, -1e4],                   # the label's logit far below the max: log(p) underflows
    [-1e4, -1e4 + 1.0, -1e4 + 2.0],     # every logit very negative: a batch-wide max fails
    [1e4, 1e4, 1e4],                    # large and equal: exp overflows
    [0.0, 1e4, 0.0],                    # one large logit
])
STABLE_LABELS = np.array([2, 0, 1, 1])
BATCH_MAX_ROW = 1


def extreme_logits(rng: np.random.Generator) -> list[Case]:
    return [Case({"logits": STABLE_LOGITS.astype(dtype), "y": STABLE_LABELS.copy()},
                 (("B", 4), ("C", 3)), dtype) for dtype in DTYPES]


SGD_RATES = (0.1, 0.5, 1.0, 0.01)


def sgd_case(rng: np.random.Generator, shape: Sequence[int], lr: float,
             dtype: str, grads_reversed: bool = False) -> Case:
    """One sgd_step call; with `grads_reversed`, its grads dict holds its keys in the other
    order than params (the contract pairs them by name, which no order changes)."""
    b, d, h, c = shape
    net = network_case(rng, b, d, h, c, dtype)
    grads = {"d" + name: rng.standard_normal(net[name].shape).astype(dtype) for name in PARAMS}
    return Case({name: net[name] for name in PARAMS} | grads, net.dims[1:], dtype,
                extra={"lr": lr, "grads_reversed": grads_reversed})


def sgd_cases(rng: np.random.Generator) -> list[Case]:
    """Six network shapes and one drawn from the run's seed, in each dtype; every other one
    with its grads in the other key order."""
    shapes = [*NETWORK_SHAPES[:6], drawn_sizes(rng, 4)]
    return [sgd_case(rng, shape, SGD_RATES[i % len(SGD_RATES)], dtype, i % 2 == 1)
            for dtype in DTYPES for i, shape in enumerate(shapes)]


def one_sgd(rng: np.random.Generator) -> Case:
    return sgd_case(rng, (4, 3, 5, 3), 0.1, "float64")


def malformed_grads(rng: np.random.Generator) -> list[Case]:
    """A gradient of the wrong shape (D=3, H=5, C=2), one of which would broadcast."""
    good = sgd_case(rng, (4, 3, 5, 2), 0.1, "float64")
    bad = {"dW1 is (5, 3), W1 is (3, 5)": ("dW1", (5, 3)),
           "db1 is (1, 5), b1 is (5,): it would broadcast": ("db1", (1, 5)),
           "db2 is (3,), b2 is (2,)": ("db2", (3,))}
    return [Case({**good.inputs, name: np.ones(shape)}, label=label, extra=good.extra)
            for label, (name, shape) in bad.items()]


def blobs(rng: np.random.Generator, b: int, d: int, c: int) -> tuple[np.ndarray, np.ndarray]:
    """B points in C tight clusters whose centres lie evenly on a circle of radius 3 (turned
    by a random angle, in the first two of D >= 2 dimensions): always separable. Labels
    take turns."""
    angles = rng.uniform(0, 2 * np.pi) + 2 * np.pi * np.arange(c) / c
    centres = np.zeros((c, d))
    centres[:, 0], centres[:, 1] = 3 * np.cos(angles), 3 * np.sin(angles)
    y = np.arange(b) % c
    return centres[y] + 0.3 * rng.standard_normal((b, d)), y


def he_params(rng: np.random.Generator, d: int, h: int, c: int) -> dict[str, np.ndarray]:
    """He-normal weights (variance 2 / fan_in), zero biases."""
    return {"W1": rng.standard_normal((d, h)) * np.sqrt(2 / d), "b1": np.zeros(h),
            "W2": rng.standard_normal((h, c)) * np.sqrt(2 / h), "b2": np.zeros(c)}


def training_case(rng: np.random.Generator, b: int, d: int, h: int, c: int, lr: float,
                  steps: int, dtype: str = "float64") -> Case:
    X, y = blobs(rng, b, d, c)
    params = he_params(rng, d, h, c)
    inputs = {name: v.astype(dtype) for name, v in (params | {"X": X}).items()}
    return Case(inputs | {"y": y}, (("B", b), ("D", d), ("H", h), ("C", c)), dtype,
                extra={"lr": lr, "steps": steps})


def trajectories(rng: np.random.Generator) -> list[Case]:
    """float64 only: a float32 run may flip a ReLU gate near 0 and take another path. The last
    run's batch and hidden width are drawn from the run's seed (drawn_sizes), its input width
    (2 to 5) and classes (2 to 5) too."""
    b, h = drawn_sizes(rng, 2)
    d, c = drawn_sizes(rng, 2, (2, 5))
    return [training_case(rng, 12, 2, 6, 3, 0.5, 12), training_case(rng, 9, 3, 4, 2, 0.2, 8),
            training_case(rng, 1, 2, 3, 2, 1.0, 5), training_case(rng, b, d, h, c, 0.3, 8)]


def separable(rng: np.random.Generator) -> list[Case]:
    return [training_case(rng, 30, 2, 16, 3, 0.5, 100, dtype) for dtype in DTYPES]


def one_training(rng: np.random.Generator) -> Case:
    return training_case(rng, 12, 2, 6, 3, 0.5, 4)


def valid_trainings(rng: np.random.Generator) -> list[Case]:
    """Well-formed runs, the contract's edge among them: steps = 0 takes no step."""
    none = training_case(rng, 6, 2, 4, 3, 0.1, 0)
    return [one_training(rng), replace(none, label=f"{none.describe()}, steps = 0")]


def malformed_training(rng: np.random.Generator) -> list[Case]:
    good = training_case(rng, 6, 2, 4, 3, 0.1, 3)
    bad: dict[str, tuple[dict[str, np.ndarray], dict[str, Any]]] = {
        "y has 7 labels for 6 rows": ({"y": np.arange(7) % 3}, {}),
        "X has 3 features, W1 expects 2": ({"X": np.ones((6, 3))}, {}),
        "steps = -1": ({}, {"steps": -1})}
    return [Case({**good.inputs, **changes}, label=label, extra={**good.extra, **extra})
            for label, (changes, extra) in bad.items()]


# --- the truth ----------------------------------------------------------------------------------


def params64(case: Case) -> dict[str, np.ndarray]:
    return {name: np.asarray(case[name], dtype=np.float64) for name in PARAMS}


def forward64(params: dict[str, np.ndarray], X: np.ndarray) -> dict[str, np.ndarray]:
    """z, h and logits in float64 (numpy, judge side)."""
    z = np.asarray(X, dtype=np.float64) @ params["W1"] + params["b1"]
    h = np.maximum(z, 0.0)
    return {"z": z, "h": h, "logits": h @ params["W2"] + params["b2"]}


def logits_of(case: Case) -> np.ndarray:
    return forward64(params64(case), case["X"])["logits"]


def _torch_network(params: dict[str, np.ndarray], X: np.ndarray) -> tuple[dict[str, Any], Any]:
    """Float64 leaves for the parameters and the logits built from them (torch.relu, whose
    backward closes the gate at exactly 0)."""
    import torch

    leaves = {n: torch.tensor(params[n], dtype=torch.float64, requires_grad=True)
              for n in PARAMS}
    x = torch.tensor(np.asarray(X, dtype=np.float64))
    logits = torch.relu(x @ leaves["W1"] + leaves["b1"]) @ leaves["W2"] + leaves["b2"]
    return leaves, logits


def _grads_of(leaves: dict[str, Any]) -> Tree:
    return {"d" + n: leaves[n].grad.numpy().copy() for n in PARAMS}


def backward_of(case: Case) -> Tree:
    """The forward's logits and torch autograd's gradients of sum(logits * dlogits)."""
    leaves, logits = _torch_network(params64(case), case["X"])
    import torch

    logits.backward(torch.tensor(np.asarray(case["dlogits"], dtype=np.float64)))
    return {"logits": logits.detach().numpy().copy(), **_grads_of(leaves)}


def cross_entropy(logits: np.ndarray, y: np.ndarray) -> tuple[float, np.ndarray]:
    """torch's mean cross-entropy and its autograd gradient, float64."""
    import torch

    z = torch.tensor(np.asarray(logits, dtype=np.float64), requires_grad=True)
    loss = torch.nn.functional.cross_entropy(z, torch.tensor(np.asarray(y, dtype=np.int64)))
    (gradient,) = torch.autograd.grad(loss, z)
    return float(loss.detach()), gradient.numpy().copy()


def loss_of(case: Case) -> Tree:
    loss, dlogits = cross_entropy(case["logits"], case["y"])
    return {"loss": loss, "dlogits": dlogits}


def loss_value(inputs: dict[str, np.ndarray]) -> float:
    """The scalar the finite differences of Part 2 differentiate (y arrives as floats)."""
    return cross_entropy(inputs["logits"], inputs["y"].astype(np.int64))[0]


def sgd_of(case: Case) -> Tree:
    lr = case.extra["lr"]
    return {n: np.asarray(case[n], np.float64) - lr * np.asarray(case["d" + n], np.float64)
            for n in PARAMS}


def trained(case: Case, update: Callable[[np.ndarray, np.ndarray, float], np.ndarray] | None
            = None) -> Tree:
    """Full-batch gradient descent by torch autograd: losses before each update, and the
    final parameters. `update(p, g, lr)` replaces p - lr * g (a known slip)."""
    import torch

    params = params64(case)
    labels = torch.tensor(np.asarray(case["y"], dtype=np.int64))
    step = update or (lambda p, g, lr: p - lr * g)
    losses = []
    for _ in range(case.extra["steps"]):
        leaves, logits = _torch_network(params, case["X"])
        loss = torch.nn.functional.cross_entropy(logits, labels)
        loss.backward()
        losses.append(float(loss.detach()))
        grads = _grads_of(leaves)
        params = {n: step(params[n], grads["d" + n], case.extra["lr"]) for n in PARAMS}
    return {"losses": np.array(losses), **params}


def training_of(case: Case) -> Tree:
    return trained(case)


# --- the known mistakes: Part 1 -----------------------------------------------------------------


def _layers(case: Case) -> tuple[dict[str, np.ndarray], np.ndarray]:
    return params64(case), np.asarray(case["X"], dtype=np.float64)


def no_relu(case: Case) -> np.ndarray:
    p, X = _layers(case)
    return (X @ p["W1"] + p["b1"]) @ p["W2"] + p["b2"]


def relu_on_logits(case: Case) -> np.ndarray:
    return np.maximum(logits_of(case), 0.0)


def bias_after_relu(case: Case) -> np.ndarray:
    p, X = _layers(case)
    return (np.maximum(X @ p["W1"], 0.0) + p["b1"]) @ p["W2"] + p["b2"]


def missing_bias(case: Case, actual: Any) -> bool:
    """The logits without b1, or without b2."""
    p, X = _layers(case)
    without_b1 = np.maximum(X @ p["W1"], 0.0) @ p["W2"] + p["b2"]
    without_b2 = logits_of(case) - p["b2"]
    return any(tree_matches(actual, slip, case.dtype) for slip in (without_b1, without_b2))


# --- the known mistakes: Part 2 -----------------------------------------------------------------


def _softmax_parts(case: Case) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(probabilities, onehot, per-example losses) in float64."""
    logits = np.asarray(case["logits"], dtype=np.float64)
    shifted = logits - logits.max(axis=1, keepdims=True)
    log_probs = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    onehot = np.eye(logits.shape[1])[case["y"]]
    return np.exp(log_probs), onehot, -(log_probs * onehot).sum(axis=1)


def no_batch_mean(case: Case, actual: Any) -> bool:
    """dlogits without the 1/B of the mean (softmax - onehot), or the loss summed."""
    probs, onehot, per_example = _softmax_parts(case)
    summed = case.dim("B") > 1 and tree_matches(actual.get("loss"), float(per_example.sum()),
                                                 case.dtype)
    return summed or tree_matches(actual.get("dlogits"), probs - onehot, case.dtype)


def loss_per_example(case: Case, actual: Any) -> bool:
    loss = actual.get("loss")
    return isinstance(loss, np.ndarray) and loss.ndim > 0 and loss.size == case.dim("B")


def flipped_sign(case: Case) -> Tree:
    probs, onehot, per_example = _softmax_parts(case)
    return {"loss": float(per_example.mean()), "dlogits": (onehot - probs) / case.dim("B")}


def no_onehot(case: Case) -> Tree:
    probs, _, per_example = _softmax_parts(case)
    return {"loss": float(per_example.mean()), "dlogits": probs / case.dim("B")}


def _normalised_over(case: Case, axis: int | None) -> Tree:
    """The softmax normalised over the wrong axis (the batch, or every entry at once)."""
    logits = np.asarray(case["logits"], dtype=np.float64)
    exp = np.exp(logits - logits.max())
    probs = exp / exp.sum(axis=axis, keepdims=axis is not None)
    rows = np.arange(case.dim("B"))
    onehot = np.eye(logits.shape[1])[case["y"]]
    return {"loss": float(-np.log(probs[rows, case["y"]]).mean()),
            "dlogits": (probs - onehot) / case.dim("B")}


def softmax_over_batch(case: Case) -> Tree:
    return _normalised_over(case, 0)


def softmax_over_everything(case: Case) -> Tree:
    return _normalised_over(case, None)


# --- the known mistakes: Part 3 -----------------------------------------------------------------


def _backward(case: Case, *, gate: str = "z > 0", bias_mean: bool = False,
              divide_again: bool = False, dw2_from_z: bool = False,
              mask_before_w2: bool = False) -> Tree:
    """The hand-written backward with one knob turned to a known slip, on the true forward."""
    p, X = _layers(case)
    net = forward64(p, X)
    z, h = net["z"], net["h"]
    G = np.asarray(case["dlogits"], dtype=np.float64)
    gates = {"z > 0": z > 0, "z >= 0": z >= 0, "none": np.ones_like(z), "h": h}
    mask = gates[gate]
    dz = (mask * G) @ p["W2"].T if mask_before_w2 else (G @ p["W2"].T) * mask
    grads = {"dW1": X.T @ dz, "dW2": (z if dw2_from_z else h).T @ G}
    total = (lambda g: g.mean(axis=0)) if bias_mean else (lambda g: g.sum(axis=0))
    grads |= {"db1": total(dz), "db2": total(G)}
    scale = case.dim("B") if divide_again else 1
    return {"logits": net["logits"]} | {k: v / scale for k, v in grads.items()}


def forward_wrong(case: Case, actual: Any) -> bool:
    """The candidate's own forward gave wrong logits, so the cache it built is suspect."""
    logits = actual.get("logits") if isinstance(actual, dict) else None
    return logits is not None and not tree_matches(logits, logits_of(case), case.dtype)


def gate_open_at_zero(case: Case) -> Tree:
    return _backward(case, gate="z >= 0")


def no_gate(case: Case) -> Tree:
    return _backward(case, gate="none")


def gate_is_activation(case: Case) -> Tree:
    return _backward(case, gate="h")


def divided_again(case: Case) -> Tree:
    return _backward(case, divide_again=True)


def bias_mean(case: Case) -> Tree:
    return _backward(case, bias_mean=True)


def bias_not_summed(case: Case, actual: Any) -> bool:
    """A bias gradient left per example (B, n), kept as (1, n), or summed over the wrong axis:
    anything but its parameter's shape, while the weight gradients have theirs."""
    expected = {"db1": (case.dim("H"),), "db2": (case.dim("C"),)}
    shapes = {k: np.shape(actual.get(k)) for k in expected}
    return any(shapes[k] != expected[k] for k in expected)


def transposed_weight_gradient(case: Case, actual: Any) -> bool:
    """dW1 or dW2 equal to the transpose of the truth (a shape error unless it is square)."""
    truth = backward_of(case)
    return any(tree_matches(actual.get(k), truth[k].T, case.dtype)
               and not tree_matches(actual.get(k), truth[k], case.dtype) for k in ("dW1", "dW2"))


def dw2_from_preactivation(case: Case) -> Tree:
    return _backward(case, dw2_from_z=True)


def mask_before_w2(case: Case) -> Tree:
    return _backward(case, mask_before_w2=True)


# --- the known mistakes: Part 4 -----------------------------------------------------------------


def _sgd(case: Case, update: Callable[[np.ndarray, np.ndarray, float], np.ndarray]) -> Tree:
    return {n: update(np.asarray(case[n], np.float64), np.asarray(case["d" + n], np.float64),
                      case.extra["lr"]) for n in PARAMS}


def sgd_ascent(case: Case) -> Tree:
    return _sgd(case, lambda p, g, lr: p + lr * g)


def sgd_without_lr(case: Case) -> Tree:
    return _sgd(case, lambda p, g, lr: p - g)


def sgd_weights_only(case: Case) -> Tree:
    return {n: (v if n.startswith("b") else sgd_of(case)[n])
            for n, v in params64(case).items()}


def loss_after_update(case: Case) -> Tree:
    """losses[t] recorded after step t's update: the trajectory shifted by one."""
    longer = trained(Case(case.inputs, case.dims, case.dtype,
                          extra={**case.extra, "steps": case.extra["steps"] + 1}))
    return {**trained(case), "losses": longer["losses"][1:]}


def never_updated(case: Case) -> Tree:
    return trained(case, lambda p, g, lr: p)


def train_ascent(case: Case) -> Tree:
    return trained(case, lambda p, g, lr: p + lr * g)


def steps_off_by_one(case: Case, actual: Any) -> bool:
    losses = actual.get("losses") if isinstance(actual, dict) else None
    return losses is not None and abs(np.size(losses) - case.extra["steps"]) == 1


# --- special judges -----------------------------------------------------------------------------


def cache_owns_memory(ctx: Context, params: dict[str, str]) -> Plan:
    """Nothing in the cache shares memory with X or the parameters. The probe only looks (at
    data pointers): it mutates nothing."""
    case = one_network(ctx.rng())

    def judge(obs: dict[str, Any]) -> Verdict:
        if obs["raised"]:
            return raised_verdict(case.describe(), obs["raised"])
        if obs["shared"]:
            found = "; ".join(f"{row['path']} shares memory with {' and '.join(row['with'])}"
                              for row in obs["shared"])
            return failed(f"{case.describe()}: {found}", hint=params["hint"])
        return passed(f"{obs['leaves']} arrays in the cache, none sharing the inputs' memory")

    return Plan("round:cache_aliases", {"case": case.data()}, judge)


def gradients_of(case: Case) -> Tree:
    """The backward's truth without the forward's logits: the gradients alone."""
    return {k: v for k, v in backward_of(case).items() if k != "logits"}


def stability_hint(case: Case, obs: dict[str, Any], params: dict[str, str]) -> str | None:
    """Which shortcut broke (None: all is well). A non-finite value anywhere is instability,
    and where it is tells which kind: in dlogits, an exp overflowed (the rows of
    STABLE_LOGITS that came out wrong tell whether the max was the batch's); only in the loss,
    a log was taken of a probability that underflowed to 0."""
    truth = loss_of(case)
    loss, dlogits = obs["value"]["loss"], obs["value"]["dlogits"]
    if not isinstance(dlogits, np.ndarray) or dlogits.shape != truth["dlogits"].shape:
        return params["wrong_hint"]
    wrong = [i for i, row in enumerate(dlogits)
             if not tree_matches(row, truth["dlogits"][i], case.dtype)]
    loss_right = tree_matches(loss, truth["loss"], case.dtype)
    if not np.isfinite(dlogits).all():
        return params["batch_max_hint"] if wrong == [BATCH_MAX_ROW] else params["overflow_hint"]
    if not np.isfinite(loss).all():  # dlogits finite, so no exp overflowed: a log of 0 did
        return params["log_hint"]
    if wrong:
        return params["wrong_hint"]
    if not loss_right:
        return params["log_hint"]
    return params["warning_hint"] if obs["warnings"] else None


def _rows(matrix: np.ndarray, digits: int = 6) -> str:
    """A matrix on one line, rows separated by semicolons: [1e4, 0, -1e4; ...]."""
    return "[" + "; ".join(", ".join(f"{v + 0.0:.{digits}g}" for v in row)
                           for row in matrix) + "]"


def stability(ctx: Context, params: dict[str, str]) -> Plan:
    """Logits of +-1e4: finite and right, with no overflow warning on the way (numpy warns;
    torch does not, so there the values must speak)."""
    cases = extreme_logits(ctx.rng())

    def judge(observed: list[dict[str, Any]]) -> Verdict:
        for case, obs in zip(cases, observed, strict=False):
            where = f"logits {_rows(STABLE_LOGITS)}, labels {STABLE_LABELS.tolist()}, {case.dtype}"
            if obs["raised"]:
                return raised_verdict(where, obs["raised"])
            hint = stability_hint(case, obs, params)
            if hint is not None:
                difference = tree_difference(obs["value"], loss_of(case), case.dtype, "result")
                said = "; ".join(filter(None, [difference, *obs["warnings"]]))
                return failed(f"{where}: {said}", hint=hint)
        return passed("finite and right for logits of +-1e4 in float64 and float32, with no "
                      "overflow warning")

    return Plan("round:extreme_losses", {"cases": [c.data() for c in cases]}, judge)


def backward_loss(inputs: dict[str, np.ndarray]) -> float:
    """sum(logits * dlogits) as a function of the case's arrays: its gradient with respect to
    each parameter is what mlp_backward returns for that dlogits (the finite differences)."""
    net = forward64({n: inputs[n] for n in PARAMS}, inputs["X"])
    return float(np.sum(net["logits"] * inputs["dlogits"]))


def sgd_fresh(ctx: Context, params: dict[str, str]) -> Plan:
    """sgd_step returns a new dict of new arrays; the caller's dict and arrays are as before."""
    case = one_sgd(ctx.rng())

    def judge(obs: dict[str, Any]) -> Verdict:
        where = case.describe()
        if obs["raised"]:
            return raised_verdict(where, obs["raised"])
        changed = [n for n, after in obs["after"].items()
                   if not np.array_equal(after, case[n], equal_nan=True)]
        if changed:
            return failed(f"{where}: {', '.join(changed)} modified in place",
                          hint=params["changed_hint"])
        if obs["rebound"]:
            return failed(f"{where}: the caller's params now holds other arrays under "
                          f"{', '.join(obs['rebound'])}", hint=params["rebound_hint"])
        if obs["shared"]:
            return failed(f"{where}: the new {', '.join(obs['shared'])} share memory with the "
                          "old parameters or the gradients", hint=params["shared_hint"])
        return passed("new arrays in a new dict; the old ones untouched")

    return Plan("round:sgd_fresh", {"case": case.data()}, judge)


def _accuracy(case: Case, final: Tree) -> float:
    logits = forward64({n: np.asarray(final[n], np.float64) for n in PARAMS}, case["X"])
    return float(np.mean(logits["logits"].argmax(axis=1) == case["y"]))


def learns(ctx: Context, params: dict[str, Any]) -> Plan:
    """On well-separated clusters, the loss falls by `fall` and the final parameters classify
    every training point."""
    cases = separable(ctx.rng())
    fall = float(params["fall"])

    def judge(observed: list[dict[str, Any]]) -> Verdict:
        lines = []
        for case, obs in zip(cases, observed, strict=False):
            where = f"{case.describe()}, lr {case.extra['lr']}, {case.extra['steps']} steps"
            if obs["raised"]:
                return raised_verdict(where, obs["raised"])
            curve = np.asarray(obs["value"]["losses"], dtype=np.float64)
            if curve.shape != (case.extra["steps"],) or not np.isfinite(curve).all():
                return failed(f"{where}: expected {case.extra['steps']} finite losses, got "
                              f"{curve.size}: {curve[:4]} ...", hint=params["hint"])
            accuracy = _accuracy(case, obs["value"])
            said = (f"{where}: loss {curve[0]:.3g} -> {curve[-1]:.3g}, training accuracy "
                    f"{accuracy:.0%}")
            if curve[-1] > fall * curve[0] or accuracy < 1.0:
                return failed(said, hint=params["hint"])
            lines.append(said)
        return passed("\n".join(lines))

    return Plan("call_each", {"function": "train", "call": "train_call", "read": "read_training",
                              "cases": [c.data() for c in cases]}, judge)


# --- the interviewer's follow-ups ---------------------------------------------------------------

# The follow-ups' inputs are fixed, not drawn from the run's seed, so that every candidate is
# told the same story: with these clusters the largest learning rate diverges and kills units.
INIT_SETTINGS = {"seed": 0, "batch": 512, "width": 256, "classes": 10, "depth": 6}
DEAD_UNIT = 2
LEARNING_RATES = (0.05, 0.5, 5.0)
FOLLOWUP_SEED = 4


def followup_part1_args(seed: int) -> dict[str, Any]:
    return {"settings": INIT_SETTINGS}


def _listed(values: Iterable[float]) -> str:
    return ", ".join(f"{v:.3g}" for v in values)


def interpret_part1(data: dict[str, Any]) -> dict[str, Any]:
    from grader.round_api.judge import unavailable

    if data.get("raised"):
        return unavailable(data["raised"]["message"])
    xavier, he = data["xavier"], data["he"]
    return {"status": "measured", "values": {
        "width": INIT_SETTINGS["width"], "classes": INIT_SETTINGS["classes"],
        "depth": INIT_SETTINGS["depth"], "input": f"{data['input']:.3g}",
        "xavier_hidden": f"{xavier['hidden']:.3g}", "xavier_logits": f"{xavier['logits']:.3g}",
        "he_hidden": f"{he['hidden']:.3g}", "he_logits": f"{he['logits']:.3g}",
        "xavier_stack": _listed(xavier["stack"]), "he_stack": _listed(he["stack"]),
    }, "measured": data}


def followup_part2_args(seed: int) -> dict[str, Any]:
    return {"logits": np.array([[2.0, 1.0, -1.0], [0.5, 0.5, 3.0]]), "y": np.array([0, 1])}


def interpret_part2(data: dict[str, Any]) -> dict[str, Any]:
    from grader.round_api.judge import unavailable

    if data.get("raised"):
        return unavailable(data["raised"]["message"])
    logits, y = followup_part2_args(0).values()
    _, expected = cross_entropy(logits, y)
    yours = np.asarray(data["dlogits"], dtype=np.float64)
    return {"status": "measured", "values": {
        "dlogits": _rows(yours, 4), "expected": _rows(expected, 4),
        "gap": f"{float(np.abs(yours - expected).max()):.2g}",
        "fd_gap": f"{float(np.abs(yours - data['finite_differences']).max()):.2g}",
        "row_sums": _listed(yours.sum(axis=1)),
    }}


def followup_part3_args(seed: int) -> dict[str, Any]:
    rng = np.random.default_rng(FOLLOWUP_SEED)
    case = network_case(rng, 16, 3, 5, 3)
    b1 = case["b1"].copy()
    b1[DEAD_UNIT] = -50.0
    return {"case": Case({**case.inputs, "b1": b1}, case.dims).data()}


def interpret_part3(data: dict[str, Any]) -> dict[str, Any]:
    from grader.round_api.judge import unavailable

    if data.get("raised"):
        return unavailable(data["raised"]["message"])
    grads = data["value"]
    dW1, db1, dW2 = (np.asarray(grads[k], np.float64) for k in ("dW1", "db1", "dW2"))
    per_unit = np.abs(dW1).sum(axis=0) + np.abs(db1) + np.abs(dW2).sum(axis=1)
    live = np.delete(per_unit, DEAD_UNIT)
    return {"status": "measured", "values": {
        "unit": DEAD_UNIT, "dead": f"{per_unit[DEAD_UNIT]:.3g}", "live": _listed(live),
    }}


def followup_part4_args(seed: int) -> dict[str, Any]:
    """The clusters and He initialisation; the probe runs train at each of LEARNING_RATES."""
    case = training_case(np.random.default_rng(FOLLOWUP_SEED), 30, 2, 16, 3, 0.0, 60)
    return {"case": case.data(), "rates": list(LEARNING_RATES)}


def interpret_part4(data: dict[str, Any]) -> dict[str, Any]:
    from grader.round_api.judge import unavailable

    if data.get("raised"):
        return unavailable(data["raised"]["message"])
    inputs = followup_part4_args(FOLLOWUP_SEED)["case"]["inputs"]
    case = Case(inputs)
    rows = []
    for run in data["runs"]:
        final = {n: np.asarray(run["params"][n], np.float64) for n in PARAMS}
        with np.errstate(all="ignore"):  # a diverged run's parameters are huge
            dead = int(np.sum((forward64(final, inputs["X"])["z"] <= 0).all(axis=0)))
            accuracy = _accuracy(case, final)
        curve = run["losses"]
        rows.append(f"lr {run['lr']:g}: loss {curve[0]:.3g} -> {curve[-1] + 0.0:.3g} (highest "
                    f"{max(curve):.3g}), training accuracy {accuracy:.0%}, {dead} of "
                    f"{final['b1'].size} hidden units dead")
    return {"status": "measured", "values": {"rows": "; ".join(rows),
                                             "steps": len(data["runs"][0]["losses"])}}
