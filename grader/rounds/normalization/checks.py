"""Normalization, judge side: the inputs, the truth (torch's layer_norm and batch_norm with
autograd in float64, and numpy for the activation variances, computed here and never beside
candidate code), the known mistakes, and the special judges (the initialisers' statistics,
finite differences of every backward).

checks.toml names everything here that a check uses.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from grader.round_api.judge import (
    Case,
    Context,
    Mistake,
    Plan,
    Verdict,
    backward_sizes,
    diagnose,
    drawn_sizes,
    failed,
    held_size,
    mismatched_inputs,
    passed,
    raised_verdict,
    tree_matches,
)

Tree = dict[str, Any]
DTYPES = ("float64", "float32")

# --- Part 1: the initialisers' statistics ----------------------------------------------------
#
# A correct sampler must pass at every seed, so every bound below is a tail bound that holds
# for every sample size (no normal approximation), and the false-failure probability of one
# whole run is at most FALSE_FAILURE:
#
# * second moment: for x_i ~ N(0, v) i.i.d., n * mean(x^2) / v is chi-square with n degrees of
#   freedom exactly (the mean is known to be 0, so nothing is estimated). Chernoff's bound
#   gives, for every n, P(chi2_n / n >= 1 + t) <= exp(-n/2 (t - ln(1 + t))) and
#   P(chi2_n / n <= 1 - t) <= exp(-n/2 (-t - ln(1 - t))); `second_moment_band` solves each
#   for the t whose bound is ALPHA.
# * mean: mean(x) ~ N(0, v / n) exactly, and P(|Z| > z) = erfc(z / sqrt 2); `mean_band` takes
#   the z with erfc(z / sqrt 2) = ALPHA.
# * shape (normal, not uniform): the share of |x| > sqrt(3 v) (beyond the edge of the uniform
#   of variance v, which has none there) is a mean of n Bernoulli(p0), p0 = erfc(sqrt(3/2)) =
#   0.0833; Hoeffding: P(|share - p0| >= t) <= 2 exp(-2 n t^2) = ALPHA.
# * distribution (normal as a whole, not a few values with the right moments): the largest gap
#   between the sample's distribution function and N(0, v)'s (Kolmogorov-Smirnov; nothing is
#   estimated); Dvoretzky-Kiefer-Wolfowitz (Massart's constant): P(D >= t) <= 2 exp(-2 n t^2)
#   = ALPHA, the share's band again (about 0.02 at 32000 entries; four values with the right
#   moments and tails are 0.15 or more away).
# * independence (not one row, or a few, repeated, permuted or mirrored): for an m x n array of
#   i.i.d. N(0, v) entries each column's mean is N(0, v / m), independently of the others, so
#   m * sum(column means^2) / v is chi-square with n degrees of freedom exactly, and the rows'
#   likewise with m: `second_moment_band` again, on both sides. Identical rows make the
#   columns' statistic m times too large; rows that are permutations of one symmetric set
#   make the rows' 0.
#
# Each array is tested 9 times (the second moment's two sides, the mean, the share, the
# distribution, the two means' statistics on both sides) at ALPHA each; a run tests
# SHAPES_PER_CHECK arrays in each of the two checks, so a correct sampler fails a run with
# probability at most 2 * 3 * 9 * 1e-11 = 5.4e-10 < 1e-9 (a union bound).
# The smallest array has 32000 entries: the second moment's band is then about +-6%, the
# share's +-0.02; every slip listed below is 17% or more away from the truth.

ALPHA = 1e-11
SHAPES_PER_CHECK = 3
FALSE_FAILURE = 2 * SHAPES_PER_CHECK * 9 * ALPHA
TAIL_EDGE = math.sqrt(3.0)
TAIL_SHARE = math.erfc(TAIL_EDGE / math.sqrt(2.0))


def _solve(bound: Callable[[float], float], high: float) -> float:
    """The t in (0, high) where bound(t), decreasing in t, falls to ALPHA (bisection)."""
    low = 0.0
    for _ in range(200):
        middle = (low + high) / 2
        low, high = (middle, high) if bound(middle) > ALPHA else (low, middle)
    return high


def second_moment_band(n: int) -> tuple[float, float]:
    """(low, high): mean(x^2) / v lies in it with probability >= 1 - 2 ALPHA for N(0, v)."""
    upper = _solve(lambda t: math.exp(-n / 2 * (t - math.log1p(t))), 10.0)
    lower = _solve(lambda t: math.exp(-n / 2 * (-t - math.log1p(-t))), 1.0 - 1e-12)
    return 1.0 - lower, 1.0 + upper


def mean_band(n: int, variance: float) -> float:
    """|mean(x)| stays below this with probability >= 1 - ALPHA for N(0, variance)."""
    z = _solve(lambda t: math.erfc(t / math.sqrt(2.0)), 40.0)
    return z * math.sqrt(variance / n)


def share_band(n: int) -> float:
    return math.sqrt(math.log(2.0 / ALPHA) / (2.0 * n))


def normal_gap(sample: np.ndarray, variance: float) -> float:
    """The Kolmogorov-Smirnov distance between the sample's distribution function and that of
    N(0, variance): the largest gap, on either side of each step."""
    ordered = np.sort(sample.ravel()) / math.sqrt(variance)
    n = ordered.size
    if n == 0:
        return 0.0
    normal = 0.5 * np.asarray([math.erfc(-x / math.sqrt(2.0)) for x in ordered])
    steps = np.arange(1, n + 1) / n
    return float(max(np.max(steps - normal), np.max(normal - (steps - 1.0 / n))))


def dependent_means(sample: np.ndarray, variance: float) -> str | None:
    """What shows the entries are not independent (see the comment above): the columns' or the
    rows' means spread outside the band i.i.d. N(0, variance) entries keep; None if neither."""
    for axis, whose in ((0, "columns"), (1, "rows")):
        means = sample.mean(axis=axis)
        ratio = float(np.mean(means ** 2)) * sample.shape[axis] / variance
        low, high = second_moment_band(means.size)
        if not (math.isfinite(ratio) and low <= ratio <= high):
            return (f"its {whose}' means spread {ratio:.3g} times as much as independent "
                    f"draws' (allowed {low:.3g} to {high:.3g})")
    return None


def xavier_variance(fan_in: int, fan_out: int) -> float:
    return 2.0 / (fan_in + fan_out)


def he_variance(fan_in: int, fan_out: int) -> float:
    return 2.0 / fan_in


VARIANCES: dict[str, Callable[[int, int], float]] = {"xavier": xavier_variance,
                                                    "he": he_variance}


def init_case(fan_in: int, fan_out: int, seed: int) -> Case:
    return Case({}, (("fan_in", fan_in), ("fan_out", fan_out)),
                extra={"fan_in": fan_in, "fan_out": fan_out, "seed": seed})


def init_shapes(rng: np.random.Generator) -> list[Case]:
    """Three weights of 32000 entries or more: wide, the same transposed (fan_in and fan_out
    swapped tell Xavier's sum from one fan), and a very wide one (fan_out >> fan_in)."""
    a, b = int(rng.integers(120, 181)), int(rng.integers(300, 401))
    c, d = int(rng.integers(40, 61)), int(rng.integers(800, 1001))
    seeds = rng.integers(0, 2**31, size=3)
    return [init_case(a, b, int(seeds[0])), init_case(b, a, int(seeds[1])),
            init_case(c, d, int(seeds[2]))]


def one_init(rng: np.random.Generator) -> Case:
    return init_case(4, 3, int(rng.integers(0, 2**31)))


def malformed_fans(rng: np.random.Generator) -> list[Case]:
    seed = int(rng.integers(0, 2**31))
    bad: dict[str, tuple[Any, Any]] = {"fan_in = 0": (0, 5), "fan_out = -3": (4, -3),
                                       "fan_in = 2.5 (not an integer)": (2.5, 4)}
    return [Case({}, label=label, extra={"fan_in": fi, "fan_out": fo, "seed": seed})
            for label, (fi, fo) in bad.items()]


def _slip_variance(case: Case, actual: Any, variance: float) -> bool:
    """The candidate's second moment is that of N(0, variance), within the same band the truth
    gets."""
    n, m2 = actual["n"], actual["second_moment"]
    low, high = second_moment_band(n)
    return bool(low * variance <= m2 <= high * variance)


def _fans(case: Case) -> tuple[int, int]:
    return case.extra["fan_in"], case.extra["fan_out"]


def lecun_variance(case: Case, actual: Any) -> bool:
    fan_in, _ = _fans(case)
    return _slip_variance(case, actual, 1.0 / fan_in)


def no_factor_two(case: Case, actual: Any) -> bool:
    fan_in, fan_out = _fans(case)
    return _slip_variance(case, actual, 1.0 / (fan_in + fan_out))


def fan_out_for_fan_in(case: Case, actual: Any) -> bool:
    fan_in, fan_out = _fans(case)
    return _slip_variance(case, actual, 2.0 / fan_out)


def he_for_xavier(case: Case, actual: Any) -> bool:
    fan_in, fan_out = _fans(case)
    return _slip_variance(case, actual, 2.0 / fan_in)


def xavier_for_he(case: Case, actual: Any) -> bool:
    fan_in, fan_out = _fans(case)
    return _slip_variance(case, actual, 2.0 / (fan_in + fan_out))


def _true_variance(case: Case) -> float:
    return float(VARIANCES[case.extra["init"]](*_fans(case)))


def variance_not_std(case: Case, actual: Any) -> bool:
    """randn * variance: the second moment is variance squared."""
    return _slip_variance(case, actual, _true_variance(case) ** 2)


def std_rooted_twice(case: Case, actual: Any) -> bool:
    """randn * sqrt(std): the second moment is the standard deviation."""
    return _slip_variance(case, actual, math.sqrt(_true_variance(case)))


def uniform_std_bound(case: Case, actual: Any) -> bool:
    """U(-std, std): a third of the variance."""
    return _slip_variance(case, actual, _true_variance(case) / 3.0)


def init_statistics(ctx: Context, params: dict[str, Any]) -> Plan:
    """The candidate's initialiser on three large shapes: the shape, float64, drawn from the
    rng it is given (the same seed twice gives the same weight, another seed another), and
    normal with mean 0 and the right variance, each within a band a correct sampler leaves
    with probability below FALSE_FAILURE over the whole run (see the comment above)."""
    which = params["init"]
    cases = [Case(c.inputs, c.dims, extra={**c.extra, "init": which})
             for c in init_shapes(ctx.rng())]
    mistakes: list[Mistake] = params.get("mistakes", [])

    def judge(observed: list[dict[str, Any]]) -> Verdict:
        wrong: list[tuple[Case, Any]] = []
        first: tuple[str, str] | None = None
        lines = []
        for case, obs in zip(cases, observed, strict=False):
            fan_in, fan_out = _fans(case)
            where = f"{params['function']}({fan_in}, {fan_out}, rng)"
            if obs["raised"]:
                return raised_verdict(where, obs["raised"])
            shape = tuple(obs["shape"])
            if shape != (fan_in, fan_out):
                return failed(f"{where} has shape {shape}", hint=params["shape_hint"])
            if obs["dtype"] != "float64":
                return failed(f"{where} is {obs['dtype']}", hint=params["dtype_hint"])
            if not obs["same_seed_same"]:
                return failed(f"{where}: two generators seeded alike gave different weights",
                              hint=params["rng_hint"])
            if not obs["other_seed_differs"]:
                return failed(f"{where}: generators of different seeds gave the same weight",
                              hint=params["rng_hint"])
            n, variance = fan_in * fan_out, VARIANCES[which](fan_in, fan_out)
            sample = np.asarray(obs["sample"], np.float64)
            m1, m2 = float(sample.mean()), float(np.mean(sample ** 2))
            share = float(np.mean(np.abs(sample) > TAIL_EDGE * math.sqrt(variance)))
            low, high = second_moment_band(n)
            said = (f"{where}: mean(W^2) = {m2:.5g}, expected {variance:.5g} "
                    f"(ratio {m2 / variance:.4f}, allowed {low:.4f} to {high:.4f})")
            if not math.isfinite(m2) or not low <= m2 / variance <= high:
                wrong.append((case, {"n": n, "second_moment": m2}))
                first = first or (said, "variance")
                continue
            if abs(m1) > mean_band(n, variance):
                first = first or (f"{where}: mean {m1:.3g}, at most {mean_band(n, variance):.3g} "
                                  "expected for mean 0", "mean")
                continue
            band = share_band(n)
            if abs(share - TAIL_SHARE) > band:
                first = first or (f"{where}: {share:.2%} of the entries lie beyond sqrt(3) "
                                  f"standard deviations; a normal has {TAIL_SHARE:.2%} "
                                  f"(+-{band:.2%}), a uniform none", "tail")
                continue
            gap = normal_gap(sample, variance)
            if gap > band:
                first = first or (f"{where}: its values' distribution is {gap:.3f} away from "
                                  f"N(0, {variance:.4g}) at its widest (at most {band:.3f} "
                                  "allowed)", "distribution")
                continue
            dependent = dependent_means(sample, variance)
            if dependent:
                first = first or (f"{where}: {dependent}", "independence")
                continue
            lines.append(f"{fan_in}x{fan_out}: variance ratio {m2 / variance:.4f}")
        if first is None:
            return passed(f"normal, mean 0, variance {params['formula']} within bands a "
                          f"correct sampler leaves with probability < {FALSE_FAILURE:.1g}: "
                          + "; ".join(lines))
        message, what = first
        if what == "variance":
            named = diagnose(wrong, mistakes) if len(wrong) == len(cases) else None
            return failed(message, hint=named or params["variance_hint"])
        return failed(message, hint=params[f"{what}_hint"])

    return Plan("round:init_samples", {"function": params["function"],
                                       "cases": [c.data() for c in cases]}, judge)


# --- Part 1: activation variances ------------------------------------------------------------

ACTIVATIONS = ("relu", "tanh", "linear")
STACKS: tuple[tuple[int, tuple[int, ...], str], ...] = (
    (6, (4, 5, 3), "relu"), (3, (2, 2), "tanh"), (8, (6, 6, 6, 6), "relu"),
    (5, (3, 7, 2), "linear"), (16, (8, 8, 8), "tanh"), (4, (5,), "relu"),
    (10, (12, 6, 9, 4, 3), "relu"), (7, (3, 3), "linear"),
)


def stack_case(rng: np.random.Generator, batch: int, widths: tuple[int, ...], activation: str,
               dtype: str = "float64", scale: str = "he") -> Case:
    """x (batch, widths[0]) and len(widths) - 1 weights, scaled by He or Xavier."""
    inputs: dict[str, np.ndarray] = {"x": rng.standard_normal((batch, widths[0]))}
    for index, (fan_in, fan_out) in enumerate(zip(widths, widths[1:], strict=False)):
        variance = VARIANCES[scale](fan_in, fan_out)
        inputs[f"W{index}"] = rng.standard_normal((fan_in, fan_out)) * math.sqrt(variance)
    return Case({k: v.astype(dtype) for k, v in inputs.items()},
                (("B", batch), ("D", widths[0]), ("L", len(widths) - 1)), dtype,
                extra={"activation": activation, "layers": len(widths) - 1})


def stacks(rng: np.random.Generator) -> list[Case]:
    """STACKS, then a ReLU stack whose batch and three widths the run's seed draws
    (drawn_sizes), in each dtype."""
    batch, *widths = drawn_sizes(rng, 4)
    shapes = [*STACKS, (batch, tuple(widths), "relu")]
    return [stack_case(rng, b, widths, act, dtype) for dtype in DTYPES
            for b, widths, act in shapes]


def one_stack(rng: np.random.Generator) -> Case:
    return stack_case(rng, 5, (3, 4, 2), "relu")


DEEP = {"batch": 256, "width": 128, "layers": 12}


def deep_stacks(rng: np.random.Generator) -> list[Case]:
    """A 12-layer ReLU stack, with He weights and with Xavier weights (float64)."""
    widths = (DEEP["width"],) * (DEEP["layers"] + 1)
    return [stack_case(rng, DEEP["batch"], widths, "relu", "float64", scale)
            for scale in ("he", "xavier")]


def malformed_stacks(rng: np.random.Generator) -> list[Case]:
    good = stack_case(rng, 4, (3, 5, 2), "relu")
    bad: dict[str, tuple[dict[str, np.ndarray], str]] = {
        "activation 'sigmoid' (not relu, tanh or linear)": ({}, "sigmoid"),
        "W1 has 4 rows for a layer of width 5": ({"W1": np.ones((4, 2))}, "relu"),
        "x is 1-D": ({"x": np.ones(3)}, "relu"),
        "W0 is 1-D": ({"W0": np.ones(3)}, "tanh"),
    }
    return [Case({**good.inputs, **changes}, label=label,
                 extra={**good.extra, "activation": activation})
            for label, (changes, activation) in bad.items()]


def _activate(z: np.ndarray, activation: str) -> np.ndarray:
    if activation == "relu":
        return np.asarray(np.maximum(z, 0.0))
    if activation == "tanh":
        return np.asarray(np.tanh(z))
    return z


def _weights(case: Case) -> list[np.ndarray]:
    return [np.asarray(case[f"W{i}"], np.float64) for i in range(case.extra["layers"])]


def _stack(case: Case, variance: Callable[[np.ndarray, np.ndarray], float] | None = None,
           *, pre_activation: bool = False, last_linear: bool = False,
           with_input: bool = False) -> np.ndarray:
    """The variance of every layer's activations in float64, with one knob turned to a slip."""
    measure = variance or (lambda z, h: float(np.var(h)))
    h = np.asarray(case["x"], np.float64)
    weights = _weights(case)
    found = [float(np.var(h))] if with_input else []
    for index, W in enumerate(weights):
        z = h @ W
        last = index == len(weights) - 1
        h = z if last and last_linear else _activate(z, case.extra["activation"])
        found.append(measure(z, z if pre_activation else h))
    return np.array(found)


def variances_of(case: Case) -> np.ndarray:
    return _stack(case)


def variances_of_preactivations(case: Case) -> np.ndarray:
    return _stack(case, pre_activation=True)


def variances_unbiased(case: Case) -> np.ndarray:
    return _stack(case, lambda z, h: float(np.var(h, ddof=1)))


def second_moments(case: Case) -> np.ndarray:
    return _stack(case, lambda z, h: float(np.mean(h ** 2)))


def standard_deviations(case: Case) -> np.ndarray:
    return _stack(case, lambda z, h: float(np.std(h)))


def per_feature_variances(case: Case) -> np.ndarray:
    return _stack(case, lambda z, h: float(np.var(h, axis=0).mean()))


def variances_with_input(case: Case, actual: Any) -> bool:
    """The input's variance listed first: L + 1 numbers, the last L right."""
    return tree_matches(actual, _stack(case, with_input=True), case.dtype)


def last_layer_linear(case: Case) -> np.ndarray:
    return _stack(case, last_linear=True)


# --- Part 2: LayerNorm -------------------------------------------------------------------------

LAYER_SHAPES: tuple[tuple[int, int], ...] = (
    (4, 4), (3, 5), (1, 6), (2, 2), (8, 3), (5, 16), (16, 7), (6, 6), (3, 32), (10, 4),
)
SEQUENCE_SHAPES: tuple[tuple[int, int, int], ...] = ((2, 3, 4), (3, 4, 4), (1, 5, 6), (4, 2, 8))
EPSILONS = (1e-5, 1e-3, 0.1, 0.5)
ROW_SCALES = np.array([0.03, 0.3, 1.0, 3.0])


def _rows(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """Rows of every scale (so that eps matters) and offset (so that the mean matters)."""
    lead = shape[:-1]
    scale = ROW_SCALES[rng.integers(0, ROW_SCALES.size, size=lead)][..., None]
    offset = 2.0 * rng.standard_normal(lead)[..., None]
    return offset + scale * rng.standard_normal(shape)


def layer_case(rng: np.random.Generator, shape: tuple[int, ...], eps: float,
               dtype: str = "float64") -> Case:
    d = shape[-1]
    inputs = {"x": _rows(rng, shape), "gamma": 1.0 + 0.5 * rng.standard_normal(d),
              "beta": 0.5 * rng.standard_normal(d), "dy": rng.standard_normal(shape)}
    names = ("B", "T", "D") if len(shape) == 3 else ("B", "D")
    return Case({k: v.astype(dtype) for k, v in inputs.items()},
                tuple(zip(names, shape, strict=True)), dtype, extra={"eps": eps})


def layernorms(rng: np.random.Generator) -> list[Case]:
    """LAYER_SHAPES and one the run's seed draws (drawn_sizes), in each dtype."""
    return _layered(rng, [*LAYER_SHAPES, drawn_sizes(rng, 2)])


def sequences(rng: np.random.Generator) -> list[Case]:
    """SEQUENCE_SHAPES and one the run's seed draws (drawn_sizes), in each dtype."""
    return _layered(rng, [*SEQUENCE_SHAPES, drawn_sizes(rng, 3)])


def _layered(rng: np.random.Generator, shapes: Sequence[tuple[int, ...]]) -> list[Case]:
    return [layer_case(rng, shape, EPSILONS[i % len(EPSILONS)], dtype)
            for dtype in DTYPES for i, shape in enumerate(shapes)]


def one_layernorm(rng: np.random.Generator) -> Case:
    return layer_case(rng, (3, 4), 1e-3)


def valid_layernorms(rng: np.random.Generator) -> list[Case]:
    """Well-formed calls, the contract's edge among them: eps = 0 (only eps < 0 is refused;
    every row varies)."""
    no_eps = layer_case(rng, (3, 4), 0.0)
    return [one_layernorm(rng), replace(no_eps, label=f"{no_eps.describe()}, eps = 0")]


def one_sequence(rng: np.random.Generator) -> Case:
    return layer_case(rng, (2, 3, 4), 1e-3)


def malformed_layernorms(rng: np.random.Generator) -> list[Case]:
    good = layer_case(rng, (4, 3), 1e-5)
    bad: dict[str, tuple[dict[str, np.ndarray], float]] = {
        "gamma has 4 entries for 3 features": ({"gamma": np.ones(4)}, 1e-5),
        "beta is (1, 3)": ({"beta": np.ones((1, 3))}, 1e-5),
        "x is 1-D": ({"x": np.ones(3)}, 1e-5),
        "eps = -1e-5": ({}, -1e-5),
    }
    listed = list(bad.items())
    listed += [(label, (changes, 1e-5)) for label, changes in mismatched_inputs(
        good.inputs, {"x": "ND", "gamma": "D", "beta": "D"}, ranks=("gamma", "beta"),
        listed=[changes for changes, _ in bad.values()])]
    return [Case({**good.inputs, **changes}, label=label, extra={"eps": eps})
            for label, (changes, eps) in listed]


def malformed_upstream(rng: np.random.Generator) -> list[Case]:
    """A well-formed forward (B=4, D=3), then a dy of the wrong shape."""
    good = layer_case(rng, (4, 3), 1e-5)
    shapes = {"dy has 5 rows for 4": (5, 3), "dy has 2 features for 3": (4, 2),
              "dy is 1-D": (12,)}
    return [Case({**good.inputs, "dy": np.ones(shape)}, label=label, extra=good.extra)
            for label, shape in shapes.items()]


def batch_upstream(rng: np.random.Generator) -> list[Case]:
    """The same for BatchNorm (training)."""
    good = batch_case(rng, 4, 3, 0.1, 1e-5, True)
    shapes = {"dy has 5 rows for 4": (5, 3), "dy has 2 features for 3": (4, 2),
              "dy is 1-D": (12,)}
    return [Case({**good.inputs, "dy": np.ones(shape)}, label=label, extra=good.extra)
            for label, shape in shapes.items()]


def _t(a: Any, grad: bool = False) -> Any:
    import torch

    return torch.tensor(np.asarray(a, np.float64), requires_grad=grad)


def layer_forward64(x: np.ndarray, gamma: np.ndarray, beta: np.ndarray, eps: float
                    ) -> np.ndarray:
    """torch's layer_norm over the last axis, float64."""
    import torch

    y = torch.nn.functional.layer_norm(_t(x), (np.shape(x)[-1],), _t(gamma), _t(beta), eps)
    return np.asarray(y.numpy())


def layernorm_of(case: Case) -> np.ndarray:
    return layer_forward64(case["x"], case["gamma"], case["beta"], case.extra["eps"])


def layernorm_backward_of(case: Case) -> Tree:
    """y and torch autograd's dx, dgamma, dbeta of sum(y * dy)."""
    import torch

    x, gamma, beta = _t(case["x"], True), _t(case["gamma"], True), _t(case["beta"], True)
    y: Any = torch.nn.functional.layer_norm(x, (x.shape[-1],), gamma, beta, case.extra["eps"])
    y.backward(_t(case["dy"]))
    return {"y": y.detach().numpy().copy(), "dx": x.grad.numpy().copy(),
            "dgamma": gamma.grad.numpy().copy(), "dbeta": beta.grad.numpy().copy()}


def layernorm_gradients_of(case: Case) -> Tree:
    return {k: v for k, v in layernorm_backward_of(case).items() if k != "y"}


def _normalise(x: np.ndarray, axis: int, eps: float, ddof: int = 0,
               eps_outside: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """(xhat, std) of x over one axis, with the slips' knobs."""
    mean = x.mean(axis=axis, keepdims=True)
    var = x.var(axis=axis, keepdims=True, ddof=ddof)
    std = np.sqrt(var) + eps if eps_outside else np.sqrt(var + eps)
    return (x - mean) / std, std


CPU_GROWTH_D = 64
"""About the features of the by_hand checks' runs (held_size draws them near it): each row's
normalisation then does enough work to stand above a process's noise at the middle batch."""


def cpu_layernorms(rng: np.random.Generator) -> list[Case]:
    """part2.by_hand's sizes, one process each (backward_sizes): B = 1, then a middle and a
    large B, of CPU_GROWTH_D features."""
    features = held_size(rng, CPU_GROWTH_D)
    return [layer_case(rng, (b, features), 1e-5) for b in backward_sizes(rng)]


def _layer(case: Case, *, axis: int = -1, ddof: int = 0, eps_outside: bool = False,
           constants: bool = False, swap_affine: bool = False, no_gamma: bool = False,
           first_axis_only: bool = False) -> Tree:
    """LayerNorm forward and backward with one knob turned to a slip (float64)."""
    x = np.asarray(case["x"], np.float64)
    gamma, beta = np.asarray(case["gamma"], np.float64), np.asarray(case["beta"], np.float64)
    dy = np.asarray(case["dy"], np.float64)
    xhat, std = _normalise(x, axis, case.extra["eps"], ddof, eps_outside)
    scale, shift = (beta, gamma) if swap_affine else (gamma, beta)
    lead = (0,) if first_axis_only else tuple(range(x.ndim - 1))
    dxhat = dy if no_gamma else dy * gamma
    if constants:
        dx = dxhat / std
    else:
        dx = (dxhat - dxhat.mean(axis=axis, keepdims=True)
              - xhat * (dxhat * xhat).mean(axis=axis, keepdims=True)) / std
    return {"y": xhat * scale + shift, "dx": dx, "dgamma": (dy * xhat).sum(axis=lead),
            "dbeta": dy.sum(axis=lead)}


def _y(tree: Tree) -> np.ndarray:
    return np.asarray(tree["y"])


def ln_unbiased(case: Case) -> np.ndarray:
    return _y(_layer(case, ddof=1))


def ln_eps_outside(case: Case) -> np.ndarray:
    return _y(_layer(case, eps_outside=True))


def ln_over_batch(case: Case) -> np.ndarray:
    return _y(_layer(case, axis=0))


def ln_swapped_affine(case: Case) -> np.ndarray:
    return _y(_layer(case, swap_affine=True))


def ln_constants(case: Case) -> Tree:
    return _layer(case, constants=True)


def ln_no_gamma(case: Case) -> Tree:
    return _layer(case, no_gamma=True)


def ln_unbiased_backward(case: Case) -> Tree:
    return _layer(case, ddof=1)


def ln_eps_outside_backward(case: Case) -> Tree:
    return _layer(case, eps_outside=True)


def ln_first_axis_only(case: Case, actual: Any) -> bool:
    """(B, T, D) input, dgamma and dbeta summed over the batch axis alone: (T, D)."""
    if len(case.dims) != 3 or not isinstance(actual, dict):
        return False
    slip = _layer(case, first_axis_only=True)
    return any(tree_matches(actual.get(k), slip[k], case.dtype) for k in ("dgamma", "dbeta"))


def affine_not_summed(case: Case, actual: Any) -> bool:
    """dgamma or dbeta not reduced to gamma's shape (D,): per example, kept 2-D, or summed
    over the features instead of the batch."""
    if not isinstance(actual, dict):
        return False
    d = case.dim("D")
    return any(np.shape(actual[k]) != (d,) for k in ("dgamma", "dbeta") if k in actual)


def affine_summed_over_features(case: Case, actual: Any) -> bool:
    """dgamma and dbeta summed over the wrong axis on a square input (the shape is right)."""
    if not isinstance(actual, dict) or case["x"].ndim != 2:
        return False
    dy = np.asarray(case["dy"], np.float64)
    return tree_matches(actual.get("dbeta"), dy.sum(axis=1), case.dtype)


# --- Part 3: BatchNorm -------------------------------------------------------------------------

BATCH_SHAPES: tuple[tuple[int, int], ...] = (
    (4, 4), (3, 3), (2, 5), (8, 3), (5, 5), (16, 4), (6, 1), (32, 8), (7, 2), (10, 6),
)
MOMENTA = (0.1, 0.3, 0.9, 0.05, 0.2)


def batch_case(rng: np.random.Generator, n: int, d: int, momentum: float, eps: float,
               training: bool, dtype: str = "float64") -> Case:
    """Features of every scale and offset; running statistics away from the batch's."""
    scale = ROW_SCALES[rng.integers(0, ROW_SCALES.size, size=d)]
    inputs = {"x": 2.0 * rng.standard_normal(d) + scale * rng.standard_normal((n, d)),
              "gamma": 1.0 + 0.5 * rng.standard_normal(d),
              "beta": 0.5 * rng.standard_normal(d),
              "running_mean": rng.standard_normal(d),
              "running_var": rng.uniform(0.2, 3.0, size=d),
              "dy": rng.standard_normal((n, d))}
    return Case({k: v.astype(dtype) for k, v in inputs.items()}, (("N", n), ("D", d)), dtype,
                extra={"momentum": momentum, "eps": eps, "training": training})


def cpu_trainings(rng: np.random.Generator) -> list[Case]:
    """part3.by_hand's sizes, one process each (backward_sizes): a training batch of N = 2 (the
    fewest a batch's variance needs), then a middle and a large N, of CPU_GROWTH_D features."""
    features = held_size(rng, CPU_GROWTH_D)
    return [batch_case(rng, n, features, 0.1, 1e-5, True)
            for n in backward_sizes(rng, smallest=2)]


def _batches(rng: np.random.Generator, training: bool) -> list[Case]:
    """BATCH_SHAPES and one the run's seed draws (drawn_sizes), in each dtype."""
    shapes = [*BATCH_SHAPES, drawn_sizes(rng, 2)]
    return [batch_case(rng, n, d, MOMENTA[i % len(MOMENTA)], EPSILONS[i % len(EPSILONS)],
                       training, dtype)
            for dtype in DTYPES for i, (n, d) in enumerate(shapes)]


def trainings(rng: np.random.Generator) -> list[Case]:
    return _batches(rng, True)


EVALUATION_ONLY_SHAPES: tuple[tuple[int, int], ...] = ((1, 4), (1, 1))
"""A batch of one example: no variance to train on, yet valid in evaluation, which normalises
with the running statistics (serving one input at a time is the usual case)."""


def evaluations(rng: np.random.Generator) -> list[Case]:
    return _batches(rng, False) + [
        batch_case(rng, n, d, MOMENTA[i], EPSILONS[i % len(EPSILONS)], False, dtype)
        for dtype in DTYPES for i, (n, d) in enumerate(EVALUATION_ONLY_SHAPES)]


def one_training(rng: np.random.Generator) -> Case:
    return batch_case(rng, 5, 3, 0.1, 1e-3, True)


def valid_trainings(rng: np.random.Generator) -> list[Case]:
    """Well-formed training batches, momentum at both ends of [0, 1] among them (0 keeps the
    running statistics, 1 replaces them with the batch's). Not eps = 0: torch's own batch_norm
    refuses it in training."""
    edges = [batch_case(rng, 5, 3, momentum, 1e-3, True) for momentum in (0.0, 1.0)]
    return [one_training(rng), *(replace(case, label=f"{case.describe()}, momentum = {m}")
                                 for case, m in zip(edges, (0, 1), strict=True))]


def one_evaluation(rng: np.random.Generator) -> Case:
    return batch_case(rng, 5, 3, 0.1, 1e-3, False)


STEPS = 4


def running_sequences(rng: np.random.Generator) -> list[Case]:
    """STEPS training batches (the running statistics threaded from call to call), then one
    evaluation batch."""
    cases = []
    for dtype in DTYPES:
        for n, d, momentum in ((6, 3, 0.1), (4, 4, 0.3), (9, 2, 0.05)):
            first = batch_case(rng, n, d, momentum, 1e-5, True, dtype)
            batches = {f"x{k}": (first["x"] + k + rng.standard_normal((n, d))).astype(dtype)
                       for k in range(STEPS + 1)}
            cases.append(Case({**first.inputs, **batches}, first.dims, dtype,
                              extra={**first.extra, "steps": STEPS}))
    return cases


BATCHNORM_VECTORS = ("gamma", "beta", "running_mean", "running_var")
"""The arguments of batchnorm_forward with one entry per feature."""


def malformed_batchnorms(rng: np.random.Generator) -> list[Case]:
    good = batch_case(rng, 4, 3, 0.1, 1e-5, True)
    bad: dict[str, tuple[dict[str, np.ndarray], dict[str, Any]]] = {
        "x is 1-D": ({"x": np.ones(3)}, {}),
        "gamma has 4 entries for 3 features": ({"gamma": np.ones(4)}, {}),
        "running_var is (1, 3)": ({"running_var": np.ones((1, 3))}, {}),
        "running_mean has 2 entries for 3 features": ({"running_mean": np.zeros(2)}, {}),
        "momentum = 1.5": ({}, {"momentum": 1.5}),
        "momentum = -0.1": ({}, {"momentum": -0.1}),
        "a batch of one in training (N = 1)": ({"x": np.ones((1, 3))}, {}),
    }
    listed = list(bad.items())
    listed += [(label, (changes, {})) for label, changes in mismatched_inputs(
        good.inputs, {"x": "ND", **{name: "D" for name in BATCHNORM_VECTORS}},
        listed=[changes for changes, _ in bad.values()])]
    return [Case({**good.inputs, **changes}, label=label, extra={**good.extra, **extra})
            for label, (changes, extra) in listed]


def _batch_norm(x: Any, case: Case, running: tuple[Any, Any] | None = None,
                gamma: Any = None, beta: Any = None, training: bool | None = None) -> Any:
    import torch

    mean, var = running if running is not None else (_t(case["running_mean"]),
                                                     _t(case["running_var"]))
    return torch.nn.functional.batch_norm(
        x, mean, var, gamma if gamma is not None else _t(case["gamma"]),
        beta if beta is not None else _t(case["beta"]),
        case.extra["training"] if training is None else training, case.extra["momentum"],
        case.extra["eps"])


def batchnorm_of(case: Case) -> Tree:
    """torch's batch_norm in float64: y, and the running statistics it leaves."""
    running = (_t(case["running_mean"]), _t(case["running_var"]))
    y = _batch_norm(_t(case["x"]), case, running)
    return {"y": y.numpy().copy(), "running_mean": running[0].numpy().copy(),
            "running_var": running[1].numpy().copy()}


def batchnorm_backward_of(case: Case) -> Tree:
    import torch

    x, gamma, beta = _t(case["x"], True), _t(case["gamma"], True), _t(case["beta"], True)
    y = _batch_norm(x, case, gamma=gamma, beta=beta)
    y.backward(torch.as_tensor(np.asarray(case["dy"], np.float64)))
    return {"y": y.detach().numpy().copy(), "dx": x.grad.numpy().copy(),
            "dgamma": gamma.grad.numpy().copy(), "dbeta": beta.grad.numpy().copy()}


def batchnorm_gradients_of(case: Case) -> Tree:
    return {k: v for k, v in batchnorm_backward_of(case).items() if k != "y"}


def running_of(case: Case,
               step: Callable[[Case, np.ndarray, Tree], Tree] | None = None) -> Tree:
    """The running statistics after each training step, then the evaluation output, by torch
    (or by `step(case, x, state)`, a slip)."""
    state = {"running_mean": np.asarray(case["running_mean"], np.float64),
             "running_var": np.asarray(case["running_var"], np.float64)}
    means, variances = [], []
    for k in range(case.extra["steps"]):
        x = np.asarray(case[f"x{k}"], np.float64)
        state = step(case, x, state) if step else _torch_step(case, x, state, True)
        means.append(state["running_mean"])
        variances.append(state["running_var"])
    last = np.asarray(case[f"x{case.extra['steps']}"], np.float64)
    final = _torch_step(case, last, state, False)
    return {"running_means": np.array(means), "running_vars": np.array(variances),
            "y": final["y"]}


def _torch_step(case: Case, x: np.ndarray, state: Tree, training: bool) -> Tree:
    running = (_t(state["running_mean"]), _t(state["running_var"]))
    y = _batch_norm(_t(x), case, running, training=training)
    return {"y": y.numpy().copy(), "running_mean": running[0].numpy().copy(),
            "running_var": running[1].numpy().copy()}


def _batch(case: Case, *, ddof: int = 0, eps_outside: bool = False, axis: int = 0,
           running_ddof: int = 1, reversed_momentum: bool = False,
           eval_updates: bool = False, eval_batch_stats: bool = False,
           constants: bool = False, eval_backward_as_training: bool = False,
           no_gamma: bool = False) -> Tree:
    """BatchNorm forward (y, running statistics) and backward with one knob turned to a slip
    (float64)."""
    x = np.asarray(case["x"], np.float64)
    gamma, beta = np.asarray(case["gamma"], np.float64), np.asarray(case["beta"], np.float64)
    rm = np.asarray(case["running_mean"], np.float64)
    rv = np.asarray(case["running_var"], np.float64)
    dy = np.asarray(case["dy"], np.float64)
    momentum, eps, training = (case.extra[k] for k in ("momentum", "eps", "training"))
    keep = momentum if reversed_momentum else 1 - momentum
    take = 1 - keep
    batch_mode = training or eval_batch_stats
    if batch_mode:
        xhat, std = _normalise(x, axis, eps, ddof, eps_outside)
    else:
        std = np.sqrt(rv + eps) if not eps_outside else np.sqrt(rv) + eps
        xhat = (x - rm) / std
    if training or eval_updates:
        new_mean = keep * rm + take * x.mean(axis=0)
        new_var = keep * rv + take * x.var(axis=0, ddof=running_ddof)
    else:
        new_mean, new_var = rm, rv
    dxhat = dy if no_gamma else dy * gamma
    if constants or not (batch_mode or eval_backward_as_training):
        dx = dxhat / std
    else:
        dx = (dxhat - dxhat.mean(axis=axis, keepdims=True)
              - xhat * (dxhat * xhat).mean(axis=axis, keepdims=True)) / std
    return {"y": xhat * gamma + beta, "running_mean": new_mean, "running_var": new_var,
            "dx": dx, "dgamma": (dy * xhat).sum(axis=0), "dbeta": dy.sum(axis=0)}


FORWARD_KEYS = ("y", "running_mean", "running_var")
BACKWARD_KEYS = ("y", "dx", "dgamma", "dbeta")


def _forward(tree: Tree) -> Tree:
    return {k: tree[k] for k in FORWARD_KEYS}


def _backward(tree: Tree) -> Tree:
    return {k: tree[k] for k in BACKWARD_KEYS}


def bn_unbiased(case: Case) -> Tree:
    return _forward(_batch(case, ddof=1))


def bn_biased_running(case: Case) -> Tree:
    return _forward(_batch(case, running_ddof=0))


def bn_eps_outside(case: Case) -> Tree:
    return _forward(_batch(case, eps_outside=True))


def bn_over_features(case: Case, actual: Any) -> bool:
    """y normalised over each example's features (whatever became of the running
    statistics, which then have the wrong shape or values)."""
    y = actual.get("y") if isinstance(actual, dict) else None
    return tree_matches(y, _batch(case, axis=1)["y"], case.dtype)


def bn_momentum_reversed(case: Case) -> Tree:
    return _forward(_batch(case, reversed_momentum=True))


def bn_eval_updates(case: Case, actual: Any) -> bool:
    """In evaluation, y right but the running statistics returned moved (by any rule)."""
    if not isinstance(actual, dict) or case.extra["training"]:
        return False
    truth = batchnorm_of(case)
    return tree_matches(actual.get("y"), truth["y"], case.dtype) and not all(
        tree_matches(actual.get(k), truth[k], case.dtype) for k in ("running_mean",
                                                                   "running_var"))


def bn_eval_batch_stats(case: Case) -> Tree:
    return _forward(_batch(case, eval_batch_stats=True, eval_updates=True))


def bn_eval_batch_stats_frozen(case: Case) -> Tree:
    return _forward(_batch(case, eval_batch_stats=True))


def bn_constants(case: Case) -> Tree:
    return _backward(_batch(case, constants=True))


def bn_no_gamma(case: Case) -> Tree:
    return _backward(_batch(case, no_gamma=True))


def bn_eval_backward_as_training(case: Case) -> Tree:
    return _backward(_batch(case, eval_backward_as_training=True))


def bn_forward_wrong(case: Case, actual: Any) -> bool:
    """The candidate's own forward gave a wrong y, so its cache is suspect."""
    y = actual.get("y") if isinstance(actual, dict) else None
    return y is not None and not tree_matches(y, batchnorm_backward_of(case)["y"], case.dtype)


def ln_forward_wrong(case: Case, actual: Any) -> bool:
    y = actual.get("y") if isinstance(actual, dict) else None
    return y is not None and not tree_matches(y, layernorm_of(case), case.dtype)


def _momentum_sequence(reverse: bool, running_ddof: int
                       ) -> Callable[[Case, np.ndarray, Tree], Tree]:
    def step(case: Case, x: np.ndarray, state: Tree) -> Tree:
        m = case.extra["momentum"]
        keep = m if reverse else 1 - m
        return {"running_mean": keep * state["running_mean"] + (1 - keep) * x.mean(axis=0),
                "running_var": keep * state["running_var"]
                + (1 - keep) * x.var(axis=0, ddof=running_ddof)}
    return step


def sequence_momentum_reversed(case: Case) -> Tree:
    return running_of(case, _momentum_sequence(True, 1))


def sequence_biased_running(case: Case) -> Tree:
    return running_of(case, _momentum_sequence(False, 0))


def sequence_not_threaded(case: Case, actual: Any) -> bool:
    """Every step started again from the first running statistics: the running means are
    each one step's from the initial state."""
    if not isinstance(actual, dict):
        return False
    state = {"running_mean": np.asarray(case["running_mean"], np.float64),
             "running_var": np.asarray(case["running_var"], np.float64)}
    means = [_torch_step(case, np.asarray(case[f"x{k}"], np.float64), state, True)[
        "running_mean"] for k in range(case.extra["steps"])]
    return tree_matches(actual.get("running_means"), np.array(means), case.dtype)


# --- the finite differences' losses of every backward --------------------------------------


def layer_loss(inputs: dict[str, np.ndarray], case: Case) -> float:
    """sum(y * dy) through the layer norm (the finite differences' loss)."""
    y = layer_forward64(inputs["x"], inputs["gamma"], inputs["beta"], case.extra["eps"])
    return float(np.sum(y * inputs["dy"]))


def batch_loss(inputs: dict[str, np.ndarray], case: Case) -> float:
    """sum(y * dy) through torch's own batch norm, in the case's mode and settings."""
    x = np.asarray(inputs["x"], np.float64)
    with_inputs = Case({**case.inputs, **inputs}, case.dims, case.dtype, extra=case.extra)
    y = _batch_norm(_t(x), with_inputs).numpy()
    return float(np.sum(y * inputs["dy"]))


def layer_y_of(case: Case) -> np.ndarray:
    return np.asarray(layernorm_backward_of(case)["y"])


def batch_y_of(case: Case) -> np.ndarray:
    return np.asarray(batchnorm_backward_of(case)["y"])


# --- the interviewer's follow-ups ---------------------------------------------------------------

FOLLOWUP_SEED = 23
BATCH_SIZES = (2, 4, 16, 64)
FOLLOWUP_STACK = {"batch": 512, "width": 256, "layers": 10, "seed": FOLLOWUP_SEED}


def _listed(values: Any) -> str:
    return ", ".join(f"{float(v):.3g}" for v in values)


def followup_part1_args(seed: int) -> dict[str, Any]:
    return {"settings": FOLLOWUP_STACK}


def interpret_part1(data: dict[str, Any]) -> dict[str, Any]:
    from grader.round_api.judge import unavailable

    if data.get("raised"):
        return unavailable(data["raised"]["message"])
    he, xavier = np.asarray(data["he"]), np.asarray(data["xavier"])
    ratios = xavier[1:] / xavier[:-1]
    return {"status": "measured", "values": {
        "layers": FOLLOWUP_STACK["layers"], "width": FOLLOWUP_STACK["width"],
        "he": _listed(he), "xavier": _listed(xavier), "ratio": f"{float(np.mean(ratios)):.3g}",
        "he_fan": f"{data['he_weight_variance'] * FOLLOWUP_STACK['width']:.3g}",
        "xavier_fan": f"{data['xavier_weight_variance'] * FOLLOWUP_STACK['width']:.3g}",
    }, "measured": data}


def followup_part2_args(seed: int) -> dict[str, Any]:
    rng = np.random.default_rng(FOLLOWUP_SEED)
    return {"row": rng.standard_normal(8), "others": 3.0 + 5.0 * rng.standard_normal((15, 8)),
            "dy": rng.standard_normal((16, 8))}


def interpret_part2(data: dict[str, Any]) -> dict[str, Any]:
    from grader.round_api.judge import unavailable

    if data.get("raised"):
        return unavailable(data["raised"]["message"])
    return {"status": "measured", "values": {
        "layer_gap": f"{data['layer_gap']:.2g}", "row_sums": f"{data['row_sums']:.2g}",
        "projections": f"{data['projections']:.2g}",
        "dy_row_sums": f"{data['dy_row_sums']:.3g}",
    }}


def followup_part3_args(seed: int) -> dict[str, Any]:
    rng = np.random.default_rng(FOLLOWUP_SEED)
    d = 4
    return {"sample": rng.standard_normal(d) + 1.0,
            "pool": 3.0 + 2.0 * rng.standard_normal((max(BATCH_SIZES), d)),
            "sizes": list(BATCH_SIZES)}


def interpret_part3(data: dict[str, Any]) -> dict[str, Any]:
    from grader.round_api.judge import unavailable

    if data.get("raised"):
        return unavailable(data["raised"]["message"])
    rows = [f"N={n}: {_listed(y)}" for n, y in zip(data["sizes"], data["outputs"],
                                                    strict=False)]
    return {"status": "measured", "values": {
        "rows": "; ".join(rows), "spread": f"{data['spread']:.3g}",
        "eval_spread": f"{data['eval_spread']:.2g}",
    }}
