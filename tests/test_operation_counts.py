"""Counting array operations (backends' count_operations) and the complexity kind measuring them:
a vectorised function makes as many operations at any batch size, a Python loop over the batch
makes more as the batch grows, in either flavor and however the loop is written."""

from __future__ import annotations

from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from grader.checks.base import Context
from grader.checks.cases import Case
from grader.checks.kinds import Spec, complexity
from grader.engine.rounds import RoundError, get_round
from grader.probes.backends import make_backend


def batched(xp: Any) -> Callable[[Any, Any], Any]:
    return lambda A, B: xp.sum(A @ B, 0)


def indexed_loop(A: Any, B: Any) -> Any:
    return sum(A[i] @ B for i in range(A.shape[0]))


def builtin_sum(A: Any, B: Any) -> Any:
    return sum(A @ B)


def converted_loop(A: Any, B: Any) -> Any:
    A = np.asarray(A)
    return [a @ B for a in A]


def operations(flavor: str, fn: Callable[..., Any], size: int) -> int:
    backend = make_backend(flavor)
    A = backend.native(np.ones((size, 2, 3)))
    B = backend.native(np.ones((3, 4)))
    return backend.count_operations(fn, A, B)[1]


@pytest.mark.parametrize("flavor", ["numpy", "torch"])
def test_a_vectorised_function_makes_as_many_operations_at_any_batch_size(flavor: str) -> None:
    xp = pytest.importorskip("torch") if flavor == "torch" else np
    counts = {operations(flavor, batched(xp), size) for size in (2, 32)}
    assert len(counts) == 1 and counts.pop() > 0


@pytest.mark.parametrize("flavor", ["numpy", "torch"])
@pytest.mark.parametrize("loop", [indexed_loop, builtin_sum])
def test_a_loop_over_the_batch_makes_more(flavor: str, loop: Callable[..., Any]) -> None:
    assert operations(flavor, loop, 32) > 4 * operations(flavor, loop, 2)


def test_np_asarray_does_not_hide_a_loop() -> None:
    assert operations("numpy", converted_loop, 32) > 4 * operations("numpy", converted_loop, 2)


def test_matmul_flops_are_still_counted() -> None:
    backend = make_backend("numpy")
    A, B = np.ones((5, 2, 3)), np.ones((3, 4))
    assert backend.count_matmul_flops(batched(np), A, B)[1] == 2 * 5 * 2 * 3 * 4


SQUARE = 2 * 4**3  # the flops of one 4 x 4 matmul

NUMPY_SPELLINGS: dict[str, tuple[Callable[[Any, Any], Any], int]] = {
    "a @ b": (lambda A, B: A[0] @ B[0], 1),
    "np.matmul": (lambda A, B: np.matmul(A, B), 3),
    "np.dot": (lambda A, B: np.dot(A[0], B[0]), 1),
    "a.dot(b)": (lambda A, B: A[0].dot(B[0]), 1),
    "np.linalg.multi_dot": (lambda A, B: np.linalg.multi_dot([A[0], B[0], A[1]]), 2),
    "np.einsum": (lambda A, B: np.einsum("nij,njk->nik", A, B), 3),
    "np.einsum, optimized": (lambda A, B: np.einsum("ij,kj->ik", A[0], B[0], optimize=True), 1),
    "np.tensordot": (lambda A, B: np.tensordot(A[0], B[0], axes=1), 1),
    "np.tensordot, axis lists": (lambda A, B: np.tensordot(A[0], B[0], axes=([0], [0])), 1),
}


def torch_spellings() -> dict[str, tuple[Callable[[Any, Any], Any], int]]:
    torch = pytest.importorskip("torch")
    return {
        "a @ b": (lambda A, B: A[0] @ B[0], 1),
        "torch.matmul": (lambda A, B: torch.matmul(A, B), 3),
        "torch.linalg.matmul": (lambda A, B: torch.linalg.matmul(A[0], B[0]), 1),
        "torch.mm": (lambda A, B: torch.mm(A[0], B[0]), 1),
        "torch.bmm": (lambda A, B: torch.bmm(A, B), 3),
        "Tensor.matmul": (lambda A, B: A[0].matmul(B[0]), 1),
        "Tensor.mm": (lambda A, B: A[0].mm(B[0]), 1),
        "torch.addmm": (lambda A, B: torch.addmm(A[1], A[0], B[0]), 1),
        "torch.einsum": (lambda A, B: torch.einsum("nij,njk->nik", A, B), 3),
        "torch.tensordot": (lambda A, B: torch.tensordot(A[0], B[0], dims=([0], [0])), 1),
        "torch.linalg.multi_dot": (lambda A, B: torch.linalg.multi_dot([A[0], B[0], A[1]]), 2),
    }


@pytest.mark.parametrize("flavor", ["numpy", "torch"])
def test_every_spelling_of_a_matmul_is_counted_and_keeps_its_value(flavor: str) -> None:
    """Correct code written with np.dot, .dot, multi_dot, einsum, tensordot, linalg.matmul,
    ... is measured like code written with @ (multi_dot once recursed without end here)."""
    spellings = torch_spellings() if flavor == "torch" else NUMPY_SPELLINGS
    backend = make_backend(flavor)
    rng = np.random.default_rng(0)
    A, B = rng.standard_normal((3, 4, 4)), rng.standard_normal((3, 4, 4))
    for name, (fn, matmuls) in spellings.items():
        value, flops = backend.count_matmul_flops(fn, backend.native(A), backend.native(B))
        assert flops == matmuls * SQUARE, name
        plain = fn(backend.native(A), backend.native(B))
        assert np.allclose(backend.to_numpy(value), backend.to_numpy(plain)), name


def test_aten_ops_and_a_disabled_torch_function_are_beyond_the_counter() -> None:
    """Where the counter is blind, the cpu_growth kind's CPU times measure the work."""
    torch = pytest.importorskip("torch")
    backend = make_backend("torch")

    def disabled(A: Any) -> Any:
        with torch._C.DisableTorchFunction():
            return A @ A

    A = torch.ones(3, 4, 4)
    assert backend.count_matmul_flops(lambda A: torch.ops.aten.bmm(A, A), A)[1] == 0
    assert backend.count_matmul_flops(disabled, A)[1] == 0


def _spec(table: dict[str, Any]) -> Spec:
    def cases(rng: np.random.Generator) -> list[Case]:
        return [Case({"A": np.ones((s, 2, 3)), "B": np.ones((3, 4))}, (("S", s),))
                for s in (2, 32)]

    judge = SimpleNamespace(cases=cases)
    return Spec({"function": "f", "cases": "cases", "args": ["A", "B"], "size": "S",
                 "growth_hint": "loop", **table}, "test", get_round("prefix-products"),
                judge, SimpleNamespace(), lambda names, where: ())  # type: ignore[arg-type]


def test_the_complexity_kind_fails_operations_that_grow_at_exponent_zero() -> None:
    plan = complexity(_spec({"measure": "operations", "exponent": 0}))(
        Context(seed=1, flavor="numpy", check_id="part1.loop"))
    assert plan.probe == "cost_counts" and plan.args["measure"] == "operations"
    right = {"counts": [9, 9], "projections": [[1.0, 2.0], [3.0, 4.0]]}
    assert plan.judge(_against(right, right)).status == "passed"
    grown = plan.judge(_against({**right, "counts": [9, 70]}, right))
    assert grown.status == "failed" and "grows with S" in grown.message and grown.hint == "loop"
    assert plan.judge(_against({**right, "counts": [0, 0]}, right)).status == "skipped"


def _against(yours: dict[str, object], reference: dict[str, object] | None) -> dict[str, object]:
    """A counted plan's observation as the runner hands it to the judge."""
    return {"yours": yours, "baseline": reference, "baseline_error": ""}


def test_a_count_is_judged_on_calls_that_answered_as_the_reference_did() -> None:
    """Code that tells the counter's calls apart and answers them without the work counts
    little: the answers are compared with the reference's, in a process of its own."""
    plan = complexity(_spec({"measure": "operations", "exponent": 0}))(
        Context(seed=1, flavor="numpy", check_id="part1.loop"))
    assert plan.baseline is not None
    probe, args = plan.baseline
    assert probe == "cost_counts" and args["reference"][1] == "part1"
    assert {k: v for k, v in args.items() if k not in ("reference", "watch")} == \
        {k: v for k, v in plan.args.items() if k != "watch"}
    reference = {"counts": [40, 40], "projections": [[1.0, 2.0], [3.0, 4.0]]}
    shortcut = {"counts": [1, 1], "projections": [[1.0, 2.0], [0.0, 0.0]]}
    verdict = plan.judge(_against(shortcut, reference))
    assert verdict.status == "failed"
    assert verdict.message == ("S=32, float64: the answer of the call under the counter differs "
                               "from the reference's on the same inputs, so its count is not the "
                               "cost of the work")
    unreadable = plan.judge(_against({**shortcut, "projections": [None, None]}, reference))
    assert unreadable.status == "failed"
    near = {"counts": [1, 1], "projections": [[1.0 + 1e-9, 2.0], [3.0, 4.0]]}
    assert plan.judge(_against(near, reference)).status == "passed"
    assert plan.judge(_against(shortcut, None)).status == "passed"


def test_the_complexity_kind_knows_what_it_can_measure() -> None:
    with pytest.raises(RoundError, match="measure must be one of"):
        complexity(_spec({"measure": "seconds"}))


@pytest.mark.parametrize("flavor", ["numpy", "torch"])
def test_every_spelling_of_an_elementwise_product_is_counted(flavor: str) -> None:
    """The products measure: the elements each multiplication makes, however it is spelled,
    and nothing for additions."""
    backend = make_backend(flavor)
    x = backend.native(np.ones((4, 3)))

    def spellings(x: Any) -> Any:
        y = x * 2.0          # 12
        y = 2.0 * y[:2]      # 6
        y *= x[:2]           # 6
        z = x + x            # none
        if flavor == "torch":
            import torch

            return torch.addcmul(z, x, x) + torch.mul(x[0], x[1])  # 12 + 3
        return np.multiply(z, x) + y.sum() + x[0] * x[1]  # 12 + 3

    assert backend.count_products(spellings, x)[1] == 12 + 6 + 6 + 12 + 3
