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
