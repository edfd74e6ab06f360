"""Normalization, candidate side: how each check calls the candidate's functions and reads what
came back, and the probes no generic kind covers.

Everything here runs in the child beside candidate code and returns plain data; the verdicts
are made in checks.py. A case arrives as {"inputs": {name: array}, "label": str, "extra": {}}:
x, gamma, beta, dy (and running_mean, running_var, or a stack's W0, W1, ...), with eps,
momentum, training, the fans and seeds in "extra". Nothing here knows a right answer: the
initialisers' samples go back to the judge whole, and it computes their statistics.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from grader.round_api.probes import Api, CandidateFault, Raised

Observation = dict[str, Any]
GRADIENTS = ("dx", "dgamma", "dbeta")
UNCHANGED = {"eps": 1e-5, "momentum": 0.1}
"""eps and momentum of the inputs-unchanged runs (their helpers receive the arrays alone)."""

# --- arguments and readers ----------------------------------------------------------------------


def natives(api: Api, case: dict[str, Any]) -> dict[str, Any]:
    """Every input of the case as a fresh native array."""
    return {name: api.backend.native(np.asarray(a)) for name, a in case["inputs"].items()}


def generator(api: Api, seed: int) -> Any:
    """A fresh random generator of the flavor, seeded."""
    if api.backend.name == "torch":
        import torch

        return torch.Generator().manual_seed(int(seed))
    return np.random.default_rng(int(seed))


def init_call(api: Api, case: dict[str, Any]) -> tuple[Any, Any, Any]:
    extra = case["extra"]
    return extra["fan_in"], extra["fan_out"], generator(api, extra["seed"])


def tuple_of(value: Any, size: int, function: str, names: str) -> tuple[Any, ...]:
    if not isinstance(value, tuple | list) or len(value) != size:
        raise CandidateFault(f"{function} should return the {size} values ({names}); it "
                             f"returned a {type(value).__name__}")
    return tuple(value)


def variances_call(api: Api, case: dict[str, Any]) -> tuple[Any, Any, str]:
    arrays = natives(api, case)
    layers = case["extra"]["layers"]
    return [arrays[f"W{i}"] for i in range(layers)], arrays["x"], case["extra"]["activation"]


def read_variances(api: Api, args: tuple[Any, ...], value: Any) -> np.ndarray:
    """One number per layer: a list of numbers (or 0-d arrays), or a 1-D array."""
    if isinstance(value, list | tuple):
        numbers = []
        for i, v in enumerate(value):
            if isinstance(v, bool | int | float | np.generic):
                numbers.append(float(v))
                continue
            array = api.backend.to_numpy(v, f"variances[{i}]")
            if array.size != 1:
                raise CandidateFault(f"variances[{i}] should be one number, got shape "
                                     f"{array.shape}")
            numbers.append(float(array.reshape(())))
        return np.array(numbers, dtype=np.float64)
    return api.backend.to_numpy(value, "the variances").astype(np.float64)


def layer_call(api: Api, case: dict[str, Any]) -> tuple[Any, Any, Any, float]:
    arrays = natives(api, case)
    return arrays["x"], arrays["gamma"], arrays["beta"], case["extra"]["eps"]


def read_y(api: Api, args: tuple[Any, ...], value: Any) -> np.ndarray:
    return api.backend.to_numpy(tuple_of(value, 2, "layernorm_forward", "y, cache")[0], "y")


def batch_call(api: Api, case: dict[str, Any]) -> tuple[Any, ...]:
    arrays = natives(api, case)
    extra = case["extra"]
    return (arrays["x"], arrays["gamma"], arrays["beta"], arrays["running_mean"],
            arrays["running_var"], extra["momentum"], extra["eps"], extra["training"])


def read_batch(api: Api, args: tuple[Any, ...], value: Any) -> Observation:
    y, _, mean, var = tuple_of(value, 4, "batchnorm_forward",
                               "y, cache, running_mean, running_var")
    return {"y": api.backend.to_numpy(y, "y"),
            "running_mean": api.backend.to_numpy(mean, "the returned running_mean"),
            "running_var": api.backend.to_numpy(var, "the returned running_var")}


# --- forward then backward ------------------------------------------------------------------------

FORWARDS: dict[str, tuple[str, str, Callable[[Api, dict[str, Any]], tuple[Any, ...]], int]] = {
    "layernorm": ("layernorm_forward", "layernorm_backward", layer_call, 2),
    "batchnorm": ("batchnorm_forward", "batchnorm_backward", batch_call, 4),
}


def _forward(api: Api, norm: str, args: tuple[Any, ...]) -> tuple[Any, Any, Raised | None]:
    """(y, cache, None) from the candidate's forward, or (None, None, what it raised)."""
    forward, _, _, size = FORWARDS[norm]
    names = "y, cache" if size == 2 else "y, cache, running_mean, running_var"

    def run() -> tuple[Any, ...]:
        return tuple_of(api.function(forward)(*args), size, forward, names)

    try:
        value, raised = api.call(run)
    except CandidateFault as exc:
        value, raised = None, Raised("CandidateFault", str(exc), "")
    if raised is not None:
        return None, None, raised
    return value[0], value[1], None


def read_gradients(api: Api, value: Any, function: str) -> Observation:
    grads = tuple_of(value, 3, function, "dx, dgamma, dbeta")
    return {name: api.backend.to_numpy(g, name) for name, g in zip(GRADIENTS, grads,
                                                                    strict=True)}


def _backward_run(api: Api, norm: str, case: dict[str, Any]) -> Observation:
    """The candidate's forward, then their backward on its cache: y and the gradients, or
    which of the two raised (its stage)."""
    _, backward, call, _ = FORWARDS[norm]
    args = call(api, case)
    dy = api.backend.native(np.asarray(case["inputs"]["dy"]))
    y, cache, raised = _forward(api, norm, args)
    if raised is not None:
        return {"value": None, "raised": raised.as_dict(), "stage": "forward"}
    grads, raised = api.call(api.function(backward), dy, cache)
    if raised is not None:
        return {"value": None, "raised": raised.as_dict(), "stage": "backward"}
    return {"value": {"y": api.backend.to_numpy(y, "y"), **read_gradients(api, grads, backward)},
            "raised": None, "stage": "backward"}


def layer_backward_run(api: Api, case: dict[str, Any]) -> Observation:
    return _backward_run(api, "layernorm", case)


def batch_backward_run(api: Api, case: dict[str, Any]) -> Observation:
    return _backward_run(api, "batchnorm", case)


def _backward_call(api: Api, norm: str, case: dict[str, Any]) -> tuple[Any, Any]:
    """(dy, the candidate's cache): the backward's arguments, for validation."""
    _, _, call, _ = FORWARDS[norm]
    _, cache, raised = _forward(api, norm, call(api, case))
    if raised is not None:
        raise CandidateFault(f"your {FORWARDS[norm][0]} raised on well-formed input, so the "
                             f"backward could not be called: {raised.type}: {raised.message}")
    return api.backend.native(np.asarray(case["inputs"]["dy"])), cache


def layer_backward_call(api: Api, case: dict[str, Any]) -> tuple[Any, Any]:
    return _backward_call(api, "layernorm", case)


def batch_backward_call(api: Api, case: dict[str, Any]) -> tuple[Any, Any]:
    return _backward_call(api, "batchnorm", case)


# --- the inputs-unchanged runs (they receive the native arrays alone) -------------------------


def variances_on(api: Api, arrays: dict[str, Any]) -> tuple[Any, Raised | None]:
    weights = [arrays[f"W{i}"] for i in range(sum(k.startswith("W") for k in arrays))]
    return api.call(api.function("activation_variances"), weights, arrays["x"], "relu")


def layer_on(api: Api, arrays: dict[str, Any]) -> tuple[Any, Raised | None] | Raised:
    """Forward, then backward on its cache: (the backward's gradients, what it raised), or
    what the forward raised."""
    value, raised = api.call(api.function("layernorm_forward"), arrays["x"], arrays["gamma"],
                             arrays["beta"], UNCHANGED["eps"])
    if raised is not None:
        return raised
    _, cache = tuple_of(value, 2, "layernorm_forward", "y, cache")
    return api.call(api.function("layernorm_backward"), arrays["dy"], cache)


def _batch_on(api: Api, arrays: dict[str, Any],
              training: bool) -> tuple[Any, Raised | None] | Raised:
    value, raised = api.call(api.function("batchnorm_forward"), arrays["x"], arrays["gamma"],
                             arrays["beta"], arrays["running_mean"], arrays["running_var"],
                             UNCHANGED["momentum"], UNCHANGED["eps"], training)
    if raised is not None:
        return raised
    cache = tuple_of(value, 4, "batchnorm_forward", "y, cache, running_mean, running_var")[1]
    return api.call(api.function("batchnorm_backward"), arrays["dy"], cache)


def batch_training_on(api: Api, arrays: dict[str, Any]) -> tuple[Any, Raised | None] | Raised:
    return _batch_on(api, arrays, True)


def batch_evaluation_on(api: Api, arrays: dict[str, Any]) -> tuple[Any, Raised | None] | Raised:
    return _batch_on(api, arrays, False)


# --- special probes -----------------------------------------------------------------------------


def init_samples(api: Api, function: str, cases: list[dict[str, Any]]) -> list[Observation]:
    """Each initialiser's weight, whole, as float64 (the judge computes its statistics), with
    whether a second generator of the same seed gives it again and one of another seed does
    not."""
    fn = api.function(function)
    observed: list[Observation] = []
    for case in cases:
        fan_in, fan_out, rng = init_call(api, case)
        value, raised = api.call(fn, fan_in, fan_out, rng)
        if raised is not None:
            return observed + [{"raised": raised.as_dict()}]
        array = api.backend.to_numpy(value, f"{function}'s weight")
        seed = case["extra"]["seed"]
        again, raised = api.call(fn, fan_in, fan_out, generator(api, seed))
        other, raised_other = api.call(fn, fan_in, fan_out, generator(api, seed + 1))
        if raised is not None or raised_other is not None:
            return observed + [{"raised": (raised or raised_other).as_dict()}]  # type: ignore[union-attr]
        again_array = api.backend.to_numpy(again, f"{function}'s weight")
        other_array = api.backend.to_numpy(other, f"{function}'s weight")
        observed.append({
            "raised": None, "shape": list(array.shape), "dtype": str(array.dtype),
            "sample": array.astype(np.float64),
            "same_seed_same": bool(np.array_equal(array, again_array)),
            "other_seed_differs": not (other_array.shape == array.shape
                                       and bool(np.array_equal(array, other_array))),
        })
    return observed


def batch_sequence_run(api: Api, case: dict[str, Any]) -> Observation:
    """`steps` training calls, each given the running statistics the previous one returned,
    then one evaluation call: the running statistics after each step and the last y."""
    arrays = natives(api, case)
    extra = case["extra"]
    fn = api.function("batchnorm_forward")
    mean, var = arrays["running_mean"], arrays["running_var"]
    means, variances = [], []
    for k in range(extra["steps"] + 1):
        training = k < extra["steps"]
        value, raised = api.call(fn, arrays[f"x{k}"], arrays["gamma"], arrays["beta"], mean,
                                 var, extra["momentum"], extra["eps"], training)
        if raised is not None:
            return {"value": None, "raised": raised.as_dict()}
        y, _, mean, var = tuple_of(value, 4, "batchnorm_forward",
                                   "y, cache, running_mean, running_var")
        if training:
            means.append(api.backend.to_numpy(mean, "the returned running_mean"))
            variances.append(api.backend.to_numpy(var, "the returned running_var"))
    shapes = {m.shape for m in means + variances}
    if len(shapes) != 1:
        raise CandidateFault(f"the returned running statistics changed shape: {sorted(shapes)}")
    return {"value": {"running_means": np.array(means), "running_vars": np.array(variances),
                      "y": api.backend.to_numpy(y, "y")}, "raised": None}


def backward_twice(api: Api, norm: str, case: dict[str, Any]) -> Observation:
    """Two backward calls on one cache, each with a fresh dy."""
    _, backward, call, _ = FORWARDS[norm]
    _, cache, raised = _forward(api, norm, call(api, case))
    if raised is not None:
        return {"raised": raised.as_dict()}
    results = []
    for _ in range(2):
        dy = api.backend.native(np.asarray(case["inputs"]["dy"]))
        grads, raised = api.call(api.function(backward), dy, cache)
        if raised is not None:
            return {"raised": raised.as_dict()}
        results.append(read_gradients(api, grads, backward))
    return {"raised": None, "first": results[0], "second": results[1]}


def refilled(api: Api, norm: str, case: dict[str, Any]) -> Observation:
    """The gradients twice: once as usual, once with every array argument of the forward
    refilled in place with NaN (as a caller reusing its buffers would) before the backward."""
    _, backward, call, _ = FORWARDS[norm]
    found = []
    for refill in (False, True):
        args = call(api, case)
        _, cache, raised = _forward(api, norm, args)
        if raised is not None:
            return {"raised": raised.as_dict()}
        for arg in args if refill else ():
            if api.backend.name == "torch" and hasattr(arg, "fill_"):
                arg.fill_(float("nan"))
            elif isinstance(arg, np.ndarray):
                arg.fill(np.nan)
        dy = api.backend.native(np.asarray(case["inputs"]["dy"]))
        grads, raised = api.call(api.function(backward), dy, cache)
        if raised is not None:
            return {"raised": raised.as_dict()}
        found.append(read_gradients(api, grads, backward))
    return {"raised": None, "first": found[0], "second": found[1]}


# --- the interviewer's follow-up demonstrations -------------------------------------------------


def followup_part1(api: Api, settings: dict[str, int]) -> Observation:
    """A deep ReLU stack built with the candidate's own he_init and xavier_init, measured by
    their own activation_variances."""
    width, layers = settings["width"], settings["layers"]
    rng = np.random.default_rng(settings["seed"])
    x = api.backend.native(rng.standard_normal((settings["batch"], width)))
    measured: Observation = {"raised": None}
    for name in ("he", "xavier"):
        init = api.function(f"{name}_init")
        gen = generator(api, settings["seed"])
        weights = []
        for _ in range(layers):
            W, raised = api.call(init, width, width, gen)
            if raised is not None:
                return {"raised": raised.as_dict()}
            weights.append(W)
        found, raised = api.call(api.function("activation_variances"), weights, x, "relu")
        if raised is not None:
            return {"raised": raised.as_dict()}
        measured[name] = read_variances(api, (), found).tolist()
        measured[f"{name}_weight_variance"] = float(np.var(api.backend.to_numpy(weights[0])))
    return measured


def followup_part2(api: Api, row: np.ndarray, others: np.ndarray, dy: np.ndarray
                   ) -> Observation:
    """The candidate's LayerNorm on one example alone and among others, and their backward's
    dx on the batch: its sum over each row, and its dot product with each row's xhat (with
    gamma = 1 and beta = 0, y is xhat; eps = 0, where that product is exactly 0)."""
    native = api.backend.native
    d = row.shape[0]
    layer = api.function("layernorm_forward")
    batch = np.vstack([row[None, :], others])
    outputs = []
    for x in (row[None, :], batch):
        value, raised = api.call(layer, native(x), native(np.ones(d)), native(np.zeros(d)),
                                 0.0)
        if raised is not None:
            return {"raised": raised.as_dict()}
        outputs.append(tuple_of(value, 2, "layernorm_forward", "y, cache"))
    alone = api.backend.to_numpy(outputs[0][0], "y")[0]
    xhat = api.backend.to_numpy(outputs[1][0], "y")
    grads, raised = api.call(api.function("layernorm_backward"), native(dy), outputs[1][1])
    if raised is not None:
        return {"raised": raised.as_dict()}
    dx = read_gradients(api, grads, "layernorm_backward")["dx"]
    return {"raised": None, "layer_gap": float(np.abs(alone - xhat[0]).max()),
            "row_sums": float(np.abs(dx.sum(axis=-1)).max()),
            "projections": float(np.abs((dx * xhat).sum(axis=-1)).max()),
            "dy_row_sums": float(np.abs(dy.sum(axis=-1)).max())}


def followup_part3(api: Api, sample: np.ndarray, pool: np.ndarray,
                   sizes: list[int]) -> Observation:
    """One sample's BatchNorm output in training as the batch around it grows, and in
    evaluation (running statistics) at the same sizes."""
    native = api.backend.native
    d = sample.shape[0]
    fn = api.function("batchnorm_forward")
    ones, zeros = np.ones(d), np.zeros(d)
    outputs: list[np.ndarray] = []
    evaluated: list[np.ndarray] = []
    for n in sizes:
        batch = np.vstack([sample[None, :], pool[:n - 1]])
        for training, found in ((True, outputs), (False, evaluated)):
            value, raised = api.call(fn, native(batch), native(ones), native(zeros),
                                     native(pool.mean(axis=0)), native(pool.var(axis=0)),
                                     0.1, 1e-5, training)
            if raised is not None:
                return {"raised": raised.as_dict()}
            y = tuple_of(value, 4, "batchnorm_forward", "y, cache, running_mean, running_var")
            found.append(api.backend.to_numpy(y[0])[0])
    train, frozen = np.array(outputs), np.array(evaluated)
    return {"raised": None, "sizes": sizes, "outputs": train.tolist(),
            "spread": float(np.abs(train - train[-1]).max()),
            "eval_spread": float(np.abs(frozen - frozen[-1]).max())}
