"""The count of tensors autograd saves for a backward, which the watches of a backward by hand
read below Python: it sees a graph recorded from TorchScript, where neither the engine spy nor
a torch function mode looks, and counts nothing for work done by hand."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from grader.probes.autograd import counting_saved_tensors  # noqa: E402

SCRIPTED = '''
import torch
from typing import List, Optional


@torch.jit.script
def scripted_gradient(W: torch.Tensor, dP: torch.Tensor) -> torch.Tensor:
    w = W.detach().clone().requires_grad_(True)
    go: List[Optional[torch.Tensor]] = [dP]
    g = torch.autograd.grad([w @ w], [w], go)[0]
    assert g is not None
    return g.detach()
'''


@pytest.mark.filterwarnings("ignore:`torch.jit.script` is deprecated:DeprecationWarning")
def test_a_graph_recorded_in_torchscript_is_counted(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "scripted_gradient_module.py").write_text(SCRIPTED)  # TorchScript reads files
    monkeypatch.syspath_prepend(str(tmp_path))
    scripted = importlib.import_module("scripted_gradient_module").scripted_gradient
    W, dP = torch.randn(3, 3, dtype=torch.float64), torch.randn(3, 3, dtype=torch.float64)
    with torch.enable_grad(), counting_saved_tensors() as saved:
        scripted(W, dP)
    assert saved[0] > 0


def test_work_by_hand_saves_nothing() -> None:
    W, dP = torch.randn(4, 3, 3, dtype=torch.float64), torch.randn(4, 3, 3, dtype=torch.float64)
    with counting_saved_tensors() as saved:
        dW = dP @ W.mT + W.mT @ dP
        dW.sum(dim=0).abs().sqrt()
    assert saved[0] == 0


def _at_import(code: str) -> int:
    from grader.probes.autograd import autograd_at_import, watching_the_import

    with watching_the_import():
        exec(compile(code, "<part>", "exec"), {"torch": torch})
    return autograd_at_import()


@pytest.mark.parametrize("code", [
    "W = torch.randn(3, 3, requires_grad=True)",  # a tensor that could be differentiated
    "S = torch.func.vmap(lambda r: r * 2)(torch.ones(4, 3))",
    "D = torch.randn(3, 3) @ torch.randn(3, 3)",
])
def test_module_level_code_that_differentiates_nothing_is_no_autograd(code: str) -> None:
    assert _at_import(code) == 0


@pytest.mark.parametrize("code", [
    "x = torch.ones(3, requires_grad=True)\n(g,) = torch.autograd.grad((x * x).sum(), x)",
    # An engine of the code's own, which the spy on autograd's engine never sees.
    "from torch.autograd.variable import ImperativeEngine\n"
    "x = torch.ones(3, requires_grad=True)\ny = (x * x).sum()\n"
    "ImperativeEngine().run_backward((y,), (torch.ones(()),), False, False, (x,), True, True)",
])
def test_module_level_code_that_differentiates_is_seen(code: str) -> None:
    assert _at_import(code) > 0


def test_a_torch_func_transform_at_import_is_refused_and_named_for_what_it_is() -> None:
    from grader.probes.api import describe_exception
    from grader.runner.child import describe_import_failure

    with pytest.raises(RuntimeError) as raised:
        _at_import("g = torch.func.grad(lambda x: (x * x).sum())(torch.ones(3))")
    assert describe_exception(raised.value, Path("/nowhere")).type == "RuntimeError"
    assert describe_import_failure(raised.value, Path("/nowhere")).startswith(
        "autograd ran while your file was imported (a torch.func transform at module level")
