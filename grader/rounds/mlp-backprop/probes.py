"""MLP backprop, candidate side: how each check calls the candidate's functions and reads what
came back, and the probes no generic kind covers.

Everything here runs in the child beside candidate code and returns plain data; the verdicts
are made in checks.py. A case arrives as {"inputs": {name: array}, "label": str, "extra": {}}:
the network's W1, b1, W2, b2 and X (and dlogits, y, or the gradients dW1 ...), with lr and
steps in "extra".

Part 3's checks run the candidate's own mlp_forward (Part 1) to get a cache in the candidate's
format; when that forward fails, the observation says so (stage "forward") and the check tells
the candidate to fix Part 1 first.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from typing import Any

import numpy as np

from grader.round_api.probes import Api, CandidateFault, Raised

PARAMS = ("W1", "b1", "W2", "b2")
GRADS = tuple("d" + name for name in PARAMS)
PART1_MODULE = "part1_forward"
Observation = dict[str, Any]

# --- arguments and readers ----------------------------------------------------------------------


def natives(api: Api, case: dict[str, Any]) -> dict[str, Any]:
    """Every input of the case as a fresh native array."""
    return {name: api.backend.native(np.asarray(a)) for name, a in case["inputs"].items()}


def params_from(arrays: dict[str, Any], names: tuple[str, ...] = PARAMS) -> dict[str, Any]:
    return {name: arrays[name] for name in names}


def forward_call(api: Api, case: dict[str, Any]) -> tuple[Any, Any]:
    arrays = natives(api, case)
    return params_from(arrays), arrays["X"]


def pair(value: Any, function: str, names: str) -> tuple[Any, Any]:
    if not isinstance(value, tuple | list) or len(value) != 2:
        raise CandidateFault(f"{function} should return the pair ({names}); it returned a "
                             f"{type(value).__name__}")
    return value[0], value[1]


def read_logits(api: Api, args: tuple[Any, ...], value: Any) -> np.ndarray:
    return api.backend.to_numpy(pair(value, "mlp_forward", "logits, cache")[0], "logits")


def scalar(api: Api, value: Any, what: str) -> Any:
    """A Python number, or a 0-d array, as a float; anything else as an array (the judge then
    says what shape it has)."""
    if isinstance(value, bool | int | float | np.generic):
        return float(value)
    array = api.backend.to_numpy(value, what)
    return float(array) if array.ndim == 0 else array


def read_loss(api: Api, args: tuple[Any, ...], value: Any) -> Observation:
    loss, dlogits = pair(value, "softmax_cross_entropy", "loss, dlogits")
    return {"loss": scalar(api, loss, "the loss"), "dlogits": api.backend.to_numpy(dlogits,
                                                                                  "dlogits")}


def read_dlogits(api: Api, args: tuple[Any, ...], value: Any) -> np.ndarray:
    return read_loss(api, args, value)["dlogits"]


def read_dict(api: Api, value: Any, function: str, keys: tuple[str, ...]) -> Observation:
    """The arrays under `keys` of a dict the candidate returned (a missing key is left out, for
    the judge to name)."""
    if not isinstance(value, dict):
        raise CandidateFault(f"{function} should return a dict with keys {', '.join(keys)}; it "
                             f"returned a {type(value).__name__}")
    return {k: api.backend.to_numpy(value[k], k) for k in keys if k in value}


def read_gradients(api: Api, args: tuple[Any, ...], value: Any) -> Observation:
    """mlp_backward's gradients, by name."""
    return read_dict(api, value, "mlp_backward", GRADS)


def _forward(api: Api, params: dict[str, Any], X: Any) -> tuple[Any, Any, Raised | None]:
    """(cache, logits as numpy, None) from the candidate's Part 1, or (None, None, what it
    raised): a forward that fails is reported as such, not blamed on the backward."""
    def run() -> tuple[Any, Any]:
        return pair(api.other_part(PART1_MODULE).mlp_forward(params, X), "mlp_forward",
                    "logits, cache")

    try:
        value, raised = api.call(run)
    except CandidateFault as exc:
        value, raised = None, Raised("CandidateFault", str(exc), "")
    if raised is not None:
        return None, None, raised
    logits, cache = value
    return cache, api.backend.to_numpy(logits, "logits"), None


def backward_run(api: Api, case: dict[str, Any]) -> Observation:
    """The candidate's forward, then their backward on its cache: the logits and the
    gradients, or which of the two raised (its stage)."""
    arrays = natives(api, case)
    params = params_from(arrays)
    cache, logits, raised = _forward(api, params, arrays["X"])
    if raised is not None:
        return {"value": None, "raised": raised.as_dict(), "stage": "forward"}
    grads, raised = api.call(api.function("mlp_backward"), params, cache, arrays["dlogits"])
    if raised is not None:
        return {"value": None, "raised": raised.as_dict(), "stage": "backward"}
    return {"value": {"logits": logits, **read_dict(api, grads, "mlp_backward", GRADS)},
            "raised": None, "stage": "backward"}


def backward_call(api: Api, case: dict[str, Any]) -> tuple[Any, Any, Any]:
    """(params, the candidate's cache, dlogits): the backward's arguments, for validation."""
    arrays = natives(api, case)
    params = params_from(arrays)
    cache, _, raised = _forward(api, params, arrays["X"])
    if raised is not None:
        raise CandidateFault("your mlp_forward (Part 1) raised on a well-formed network, so the "
                             f"backward could not be called: fix Part 1 first ({raised.type}: "
                             f"{raised.message})")
    return params, cache, arrays["dlogits"]


def backward_on(api: Api, arrays: dict[str, Any]) -> tuple[Any, Raised | None] | Raised:
    """Forward then backward on the natives (for inputs_unchanged): (the gradients, what the
    backward raised), or what the forward raised."""
    params = params_from(arrays)
    cache, _, raised = _forward(api, params, arrays["X"])
    if raised is not None:
        return raised
    return api.call(api.function("mlp_backward"), params, cache, arrays["dlogits"])


def forward_on(api: Api, arrays: dict[str, Any]) -> tuple[Any, None] | Raised:
    """The forward on the natives (for inputs_unchanged): (the logits, None), or what was
    raised; the cache, whose layout is the candidate's own, is no answer."""
    _, logits, raised = _forward(api, params_from(arrays), arrays["X"])
    return raised if raised is not None else (logits, None)


def loss_on(api: Api, arrays: dict[str, Any]) -> tuple[Any, Raised | None]:
    return api.call(api.function("softmax_cross_entropy"), arrays["logits"], arrays["y"])


def sgd_call(api: Api, case: dict[str, Any]) -> tuple[Any, Any, float]:
    """sgd_step's arguments; a case's grads in the other key order where it says so."""
    arrays = natives(api, case)
    order = GRADS[::-1] if case["extra"].get("grads_reversed") else GRADS
    return params_from(arrays), params_from(arrays, order), case["extra"]["lr"]


def read_params(api: Api, args: tuple[Any, ...], value: Any) -> Observation:
    return read_dict(api, value, "sgd_step", PARAMS)


def train_call(api: Api, case: dict[str, Any]) -> tuple[Any, ...]:
    arrays = natives(api, case)
    return (params_from(arrays), arrays["X"], arrays["y"], case["extra"]["lr"],
            case["extra"]["steps"])


def read_training(api: Api, args: tuple[Any, ...], value: Any) -> Observation:
    """The final params and the losses: a list of numbers (or 0-d arrays), or one 1-D array."""
    params, losses = pair(value, "train", "params, losses")
    if isinstance(losses, list | tuple):
        curve = [scalar(api, loss, f"losses[{i}]") for i, loss in enumerate(losses)]
        if not all(isinstance(v, float) for v in curve):
            raise CandidateFault("train's losses should hold one number per step")
        losses = np.array(curve, dtype=np.float64)
    else:
        losses = api.backend.to_numpy(losses, "train's losses").astype(np.float64)
        if losses.ndim != 1:
            raise CandidateFault(f"train's losses should be one number per step, got an array "
                                 f"of shape {losses.shape}")
    return {"losses": losses, **read_dict(api, params, "train", PARAMS)}


UNCHANGED_RUN = {"lr": 0.1, "steps": 3}
"""The training run of the inputs-unchanged check (its inputs carry no lr or steps)."""


def train_on(api: Api, arrays: dict[str, Any]) -> Raised | None:
    return api.call(api.function("train"), params_from(arrays), arrays["X"], arrays["y"],
                    UNCHANGED_RUN["lr"], UNCHANGED_RUN["steps"])[1]


# --- special probes -----------------------------------------------------------------------------


def _leaves(value: Any, path: str, depth: int = 0) -> Iterator[tuple[str, Any]]:
    """Every array in a cache of any shape: dicts, sequences, and objects' attributes."""
    if depth > 6:
        return
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _leaves(item, f"{path}[{key!r}]", depth + 1)
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            yield from _leaves(item, f"{path}[{index}]", depth + 1)
    elif isinstance(value, np.ndarray) or type(value).__name__ == "Tensor":
        yield path, value
    elif hasattr(value, "__dict__") and not callable(value):
        for key, item in vars(value).items():
            yield from _leaves(item, f"{path}.{key}", depth + 1)


def _shares(api: Api, a: Any, b: Any) -> bool:
    """Whether two arrays of the flavor share memory (arrays of another library do not)."""
    try:
        return api.backend.shares_memory(a, b)
    except (TypeError, AttributeError):
        return False


def cache_aliases(api: Api, case: dict[str, Any]) -> Observation:
    """Which arrays of the candidate's cache share memory with X or a parameter. Looks only:
    nothing is mutated."""
    arrays = natives(api, case)
    inputs = {**params_from(arrays), "X": arrays["X"]}
    value, raised = api.call(api.function("mlp_forward"), params_from(arrays), arrays["X"])
    if raised:
        return {"raised": raised.as_dict()}
    _, cache = pair(value, "mlp_forward", "logits, cache")
    leaves = list(_leaves(cache, "cache"))
    shared = [{"path": path, "with": [name for name, x in inputs.items() if _shares(api, a, x)]}
              for path, a in leaves]
    return {"raised": None, "leaves": len(leaves), "shared": [s for s in shared if s["with"]]}


def extreme_losses(api: Api, cases: list[dict[str, Any]]) -> list[Observation]:
    """The loss on logits of +-1e4, with numpy's overflow, divide and invalid warnings
    recorded (underflow to 0 is expected and not a warning)."""
    observed: list[Observation] = []
    fn = api.function("softmax_cross_entropy")
    for case in cases:
        arrays = natives(api, case)
        with warnings.catch_warnings(record=True) as caught, \
                np.errstate(over="warn", divide="warn", invalid="warn", under="ignore"):
            warnings.simplefilter("always")
            value, raised = api.call(fn, arrays["logits"], arrays["y"])
        said = sorted({f"{w.category.__name__}: {w.message}" for w in caught
                       if issubclass(w.category, RuntimeWarning)})
        if raised:
            return observed + [{"raised": raised.as_dict(), "warnings": said}]
        observed.append({"raised": None, "warnings": said,
                         "value": read_loss(api, (), value)})
    return observed


def backward_twice(api: Api, case: dict[str, Any]) -> Observation:
    """Two backward calls on one cache, each with a fresh dlogits."""
    arrays = natives(api, case)
    params = params_from(arrays)
    cache, _, raised = _forward(api, params, arrays["X"])
    if raised is not None:
        return {"raised": raised.as_dict()}
    results = []
    for _ in range(2):
        dlogits = api.backend.native(np.asarray(case["inputs"]["dlogits"]))
        grads, raised = api.call(api.function("mlp_backward"), params, cache, dlogits)
        if raised:
            return {"raised": raised.as_dict()}
        results.append(read_dict(api, grads, "mlp_backward", GRADS))
    return {"raised": None, "first": results[0], "second": results[1]}


def sgd_fresh(api: Api, case: dict[str, Any]) -> Observation:
    """What sgd_step did to the caller's dict and arrays, and whether its results are new."""
    params, grads, lr = sgd_call(api, case)
    before = dict(params)
    value, raised = api.call(api.function("sgd_step"), params, grads, lr)
    if raised:
        return {"raised": raised.as_dict()}
    read_dict(api, value, "sgd_step", PARAMS)  # a fault unless it is a dict of arrays
    olds = list(before.values()) + list(grads.values())
    return {
        "raised": None,
        "after": {n: api.backend.to_numpy(before[n]) for n in PARAMS},
        "rebound": [n for n in PARAMS if params.get(n) is not before[n]],
        "shared": [n for n in PARAMS if n in value and any(
            value[n] is old or _shares(api, value[n], old) for old in olds)],
    }


# --- the interviewer's follow-up demonstrations -------------------------------------------------


def _variance(api: Api, x: Any) -> float:
    return float(np.var(api.backend.to_numpy(x, "the activations")))


def followup_part1(api: Api, settings: dict[str, int]) -> Observation:
    """Activation variances per layer through the candidate's forward, with Xavier and He
    weights. A hidden layer alone is their forward with W2 = I and b2 = 0, so a deep stack is
    their forward applied layer after layer."""
    rng = np.random.default_rng(settings["seed"])
    batch, width, classes = settings["batch"], settings["width"], settings["classes"]
    X = rng.standard_normal((batch, width))
    native = api.backend.native
    forward = api.function("mlp_forward")
    identity = {"W2": native(np.eye(width)), "b2": native(np.zeros(width))}
    scales = {"xavier": lambda fan_in, fan_out: np.sqrt(2 / (fan_in + fan_out)),
              "he": lambda fan_in, fan_out: np.sqrt(2 / fan_in)}
    measured: Observation = {"input": float(np.var(X)), "raised": None}

    def hidden_layer(W: np.ndarray, x: Any) -> Any:
        return pair(forward({"W1": native(W), "b1": native(np.zeros(width)), **identity}, x),
                    "mlp_forward", "logits, cache")[0]

    for name, scale in scales.items():
        W1 = rng.standard_normal((width, width)) * scale(width, width)
        W2 = rng.standard_normal((width, classes)) * scale(width, classes)
        params = {"W1": native(W1), "b1": native(np.zeros(width)), "W2": native(W2),
                  "b2": native(np.zeros(classes))}
        value, raised = api.call(forward, params, native(X))
        if raised:
            return {"raised": raised.as_dict()}
        stack, x = [], native(X)
        for _ in range(settings["depth"]):
            x, raised = api.call(hidden_layer, rng.standard_normal((width, width))
                                 * scale(width, width), x)
            if raised:
                return {"raised": raised.as_dict()}
            stack.append(_variance(api, x))
        measured[name] = {"hidden": _variance(api, hidden_layer(W1, native(X))),
                          "logits": _variance(api, pair(value, "mlp_forward", "logits, cache")[0]),
                          "stack": stack}
    return measured


def followup_part2(api: Api, logits: np.ndarray, y: np.ndarray) -> Observation:
    """The candidate's dlogits, and central differences of their own loss."""
    fn = api.function("softmax_cross_entropy")
    native = api.backend.native
    value, raised = api.call(fn, native(logits), native(y))
    if raised:
        return {"raised": raised.as_dict()}
    dlogits = read_loss(api, (), value)["dlogits"]
    eps, estimate = 1e-6, np.zeros_like(logits)
    for index in np.ndindex(*logits.shape):
        nudged = []
        for sign in (1, -1):
            moved = logits.copy()
            moved[index] += sign * eps
            loss = read_loss(api, (), fn(native(moved), native(y)))["loss"]
            nudged.append(float(loss))
        estimate[index] = (nudged[0] - nudged[1]) / (2 * eps)
    return {"raised": None, "dlogits": dlogits, "finite_differences": estimate}


def followup_part3(api: Api, case: dict[str, Any]) -> Observation:
    """The candidate's gradients on a network with one dead hidden unit."""
    obs = backward_run(api, case)
    return {"raised": obs["raised"], "value": obs["value"]}


def followup_part4(api: Api, case: dict[str, Any], rates: list[float]) -> Observation:
    """The candidate's train at several learning rates."""
    runs = []
    for lr in rates:
        args = train_call(api, {**case, "extra": {**case["extra"], "lr": lr}})
        value, raised = api.call(api.function("train"), *args)
        if raised:
            return {"raised": raised.as_dict()}
        seen = read_training(api, args, value)
        runs.append({"lr": lr, "losses": seen["losses"].tolist(),
                     "params": {n: seen[n] for n in PARAMS}})
    return {"raised": None, "runs": runs}
