"""The linear-recurrence round beyond its solution matrix: the judge's truths agree with each
other and with finite differences, no known mistake is named for a right answer and each one
is told from the truth, the element-by-element depth and the products counted tell a scan from
a loop (and Blelloch from Hillis-Steele), the follow-ups measure what their answers quote on real
code, the topics' demonstrations print what their text claims, and the real CLI fails a known
mistake with its hint and passes the reference."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner

from grader.candidate.explain import run_demos
from grader.checks.followups import followup_for, model_answer
from grader.checks.kinds import central_differences
from grader.checks.mistakes import diagnose
from grader.checks.table import MistakeBook, load_module
from grader.cli import cli
from grader.engine.prose import topics
from grader.engine.references import load_reference_part
from grader.engine.rounds import get_round
from grader.probes.backends import make_backend
from grader.probes.depth import SlotDepths, numpy_depth, torch_depth
from grader.runner import Request, Worker

from helpers import solution, write_workspace

ROUND = get_round("linear-recurrence")
CHECKS = load_module(ROUND, "checks")
MISTAKES = MistakeBook(tomllib.loads((ROUND.folder / "checks.toml").read_text()), CHECKS,
                       "checks.toml").mistakes


def test_the_backward_truth_is_the_derivative() -> None:
    """gradients() (torch autograd through the loop) against central differences of the
    loss, and against both references' hand-written backward."""
    case = CHECKS.make_case(np.random.default_rng(0), 4, 2)
    truth = CHECKS.gradients_of(case)
    for name in ("a", "b", "h0"):
        numeric = central_differences(CHECKS.loss, case.inputs, name, 1e-6)
        np.testing.assert_allclose(truth["d" + name], numeric, rtol=1e-6, atol=1e-8)
    args = [case[n] for n in ("a", "h0", "h", "dh")]
    numpy_backward = load_reference_part(ROUND, ROUND.part("part3"), "numpy")
    for name, value in zip(("da", "db", "dh0"), numpy_backward.recurrence_backward(*args),
                           strict=True):
        np.testing.assert_allclose(value, truth[name], rtol=1e-10, atol=1e-12)


def _truths() -> list[tuple[Any, dict[str, Any]]]:
    """(case, {check family: the right answer}) over the correctness cases."""
    rng = np.random.default_rng(1)
    return [(case, {"forward": CHECKS.forward_of(case), "backward": CHECKS.gradients_of(case)})
            for case in CHECKS.many(rng) + CHECKS.empty(rng)]


def test_no_mistake_is_named_for_the_right_answer() -> None:
    """Only wrong results are ever diagnosed; still, no reproducer may match the truth where
    the slip makes a difference (T > 1: one step has no order and no earlier state)."""
    for case, right in _truths():
        if case.dim("T") <= 1:
            continue
        for family, names in FAMILIES.items():
            found = diagnose([(case, right[family])], [MISTAKES[n] for n in names])
            assert found is None, (case.describe(), family, found)
    for case in CHECKS.combine_cases(np.random.default_rng(2)):
        combine = [MISTAKES[n] for n in ("combine-swapped", "combine-unscaled",
                                         "combine-own-scale")]
        assert diagnose([(case, CHECKS.composed_of(case))], combine) is None


FAMILIES = {"forward": ("h0-forgotten", "exclusive-scan", "bias-inside", "composed-backwards",
                        "padded-wrong-identity", "started-elsewhere", "tail-dropped",
                        "stale-down-sweep", "closed-form"),
            "backward": ("scanned-forward", "unshifted-coefficient", "da-uses-h",
                         "h-before-wraps", "dh0-missing-a", "dh0-forgotten", "no-adjoint-scan",
                         "not-flipped-back")}


OUTPUTS = {name: entry["output"] for name, entry in tomllib.loads(
    (ROUND.folder / "checks.toml").read_text())["mistakes"].items() if "output" in entry}


@pytest.mark.parametrize("name", sorted(OUTPUTS))
def test_each_simulated_mistake_differs_from_the_truth(name: str) -> None:
    """A reproducer that gives the right answer on most cases would name nothing."""
    output = getattr(CHECKS, OUTPUTS[name])
    if name.startswith("combine"):
        rows = [(c, CHECKS.composed_of(c)) for c in CHECKS.combine_cases(
            np.random.default_rng(2))]
    else:
        family = "forward" if name in FAMILIES["forward"] else "backward"
        rows = [(c, right[family]) for c, right in _truths() if c.dim("T") > 1]
    differ = sum(_differs(output(case), right) for case, right in rows)
    assert differ >= 0.8 * len(rows)


def _differs(value: Any, truth: Any) -> bool:
    if isinstance(truth, dict):
        return any(_differs(value[k], truth[k]) for k in truth)
    return not np.allclose(value, truth, rtol=1e-6, atol=1e-9)


# --- the engine's element-by-element depth and products, on this round's kind of code -------


def test_slot_depths_read_the_last_depth_written_and_zero_where_none_was() -> None:
    slots = SlotDepths(core=0)
    offsets = np.array([[0, 1], [2, 1]])
    assert slots.read(7, offsets).tolist() == [[0, 0], [0, 0]]
    slots.write(7, offsets, np.array([[3, 4], [5, 6]]))
    assert slots.read(7, offsets).tolist() == [[3, 6], [5, 6]]  # slot 1 written twice
    slots.write(7, np.array([2, 4]), 9)  # one depth for every slot written
    assert slots.read(7, np.array([0, 2, 4, 5])).tolist() == [3, 9, 9, 0]
    assert slots.read(8, offsets).tolist() == [[0, 0], [0, 0]]  # another buffer
    assert slots.read(7, np.zeros((0, 2), dtype=np.int64)).shape == (0, 2)


def _sequential(a: Any, b: Any, h0: Any) -> Any:
    h = a * 0
    state = h0
    for t in range(a.shape[0]):
        state = a[t] * state + b[t]
        h[t] = state
    return h


def _fancy_sequential(a: Any, b: Any, h0: Any) -> Any:
    """The loop again, each row written through an index list (a copy, not a view)."""
    h = a * 0
    h[[0]] = a[[0]] * h0 + b[[0]]
    for t in range(1, a.shape[0]):
        h[[t]] = a[[t]] * h[[t - 1]] + b[[t]]
    return h


def _hillis_steele(a: Any, b: Any, h0: Any) -> Any:
    A, B, step = a * 1, b * 1, 1
    while step < a.shape[0]:
        A2, B2 = A * 1, B * 1
        A2[step:], B2[step:] = A[:-step] * A[step:], A[step:] * B[:-step] + B[step:]
        A, B, step = A2, B2, step * 2
    return A * h0 + B


def _depth(flavor: str, fn: Any, t: int) -> int:
    rng = np.random.default_rng(t)
    arrays = [rng.uniform(0.5, 1, (t, 2)), rng.standard_normal((t, 2)), rng.standard_normal(2)]
    if flavor == "torch":
        import torch

        tensors = [torch.from_numpy(x) for x in arrays]
        with torch_depth("element") as depth:
            return depth(fn(*tensors))
    with numpy_depth("element") as (wrap, depth):
        return depth(fn(*(wrap(x) for x in arrays)))


@pytest.mark.parametrize("flavor", ["numpy", "torch"])
def test_element_depth_tells_the_scan_from_the_loop(flavor: str) -> None:
    scan = load_reference_part(ROUND, ROUND.part("part2"), flavor).scan_recurrence
    assert _depth(flavor, _sequential, 64) - _depth(flavor, _sequential, 8) >= 50
    assert _depth(flavor, _fancy_sequential, 64) - _depth(flavor, _fancy_sequential, 8) >= 50
    assert _depth(flavor, scan, 64) - _depth(flavor, scan, 8) <= 8
    assert _depth(flavor, _hillis_steele, 64) - _depth(flavor, _hillis_steele, 8) <= 4


def _laundered(how: str) -> Any:
    """The loop run on numbers taken out of the arrays, then one product by ones inside them,
    so that a chain of one is all the probe would see."""
    def scan(a: Any, b: Any, h0: Any) -> Any:
        taken = {"tolist": lambda x: x.tolist(),
                 "item": lambda x: [v.item() for v in x.reshape(-1)],
                 "float": lambda x: [float(v) for v in x.reshape(-1)]}[how]
        a_, b_ = np.asarray(taken(a), dtype=float).reshape(a.shape), \
            np.asarray(taken(b), dtype=float).reshape(b.shape)
        h, out = np.asarray(taken(h0), dtype=float).reshape(h0.shape), []
        for t in range(a_.shape[0]):
            h = a_[t] * h + b_[t]
            out.append(h)
        made = np.stack(out)
        return a * 0 + (made if isinstance(a, np.ndarray) else a.new_tensor(made)) * (a * 0 + 1)
    return scan


@pytest.mark.parametrize("how", ["tolist", "item", "float"])
@pytest.mark.parametrize("flavor", ["numpy", "torch"])
def test_numbers_taken_out_of_the_arrays_leave_no_depth_to_measure(flavor: str,
                                                                   how: str) -> None:
    """Whatever is computed on numbers that left the arrays is out of sight: the depth is 0
    (not measured), not the one product made back inside them."""
    assert _depth(flavor, _laundered(how), 64) == _depth(flavor, _laundered(how), 8) == 0
    assert _depth(flavor, _hillis_steele, 8) > 0


@pytest.mark.parametrize("how", ["dlpack", "storage bytes", "from_numpy"])
def test_numbers_back_in_from_outside_the_tensors_leave_no_depth_to_measure(how: str) -> None:
    """However the numbers left (a dlpack capsule, the storage's bytes, numpy's view), the loop
    run on them is out of sight, and they come back in through a way the probe notes."""
    import torch

    def taken(x: Any) -> np.ndarray:
        if how == "dlpack":
            return np.from_dlpack(x.detach())
        if how == "storage bytes":
            return np.frombuffer(bytes(x.untyped_storage()), dtype=np.float64).reshape(x.shape)
        return np.from_dlpack(x.detach()).copy()

    def scan(a: Any, b: Any, h0: Any) -> Any:
        a_, b_, h = taken(a), taken(b), taken(h0)
        out = []
        for t in range(a_.shape[0]):
            h = a_[t] * h + b_[t]
            out.append(h)
        if how == "from_numpy":
            made = torch.from_numpy(np.stack(out))
        else:
            made = torch.as_tensor(np.stack(out))
        return made * (a * 0 + 1)

    assert _depth("torch", scan, 64) == _depth("torch", scan, 8) == 0
    assert torch.from_numpy.__name__ == "from_numpy"  # put back after the block


@pytest.mark.parametrize("flavor", ["numpy", "torch"])
def test_products_tell_blelloch_from_hillis_steele(flavor: str) -> None:
    backend = make_backend(flavor)
    scan = load_reference_part(ROUND, ROUND.part("part2"), flavor).scan_recurrence

    def products(fn: Any, t: int) -> int:
        arrays = [np.full((t, 2), 0.5), np.ones((t, 2)), np.ones(2)]
        return int(backend.count_products(fn, *(backend.native(x) for x in arrays))[1])

    assert products(_sequential, 64) == 2 * 64 * 2  # a * 0, then a[t] * state
    assert products(scan, 512) / products(scan, 16) < 1.5 * 32
    assert products(_hillis_steele, 512) / products(_hillis_steele, 16) > 1.5 * 32


def test_thorough_counting_sees_through_concatenate_and_new_buffers() -> None:
    """np.concatenate hands back a plain array and np.ones makes one: the products of what
    comes out are counted all the same."""
    backend = make_backend("numpy")

    def padded(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        both = np.concatenate([a, np.ones((2, 3))])
        return both * np.ones((4, 3)) * b[:1]

    assert backend.count_products(padded, np.ones((2, 3)), np.ones((2, 3)))[1] == 24


# --- the follow-ups, on the reference and on a known solution ------------------------------


@pytest.fixture
def worker(grading) -> Worker:  # type: ignore[no-untyped-def]
    return grading.worker


def evidence(worker: Worker, root: Path, flavor: str, parts: list[str]) -> dict[str, Any]:
    request = Request(id="followup", root=str(root), round=ROUND.id, flavor=flavor,
                      parts=parts, seed=1, kind="followup")
    return worker.follow_up(request)


@pytest.mark.parametrize("flavor", ["numpy", "torch"])
def test_follow_ups_measure_the_references(worker: Worker, tmp_path: Path, flavor: str) -> None:
    parts = ["part1", "part2", "part3"] + (["part4"] if flavor == "torch" else [])
    found = evidence(worker, write_workspace(tmp_path, flavor, round_=ROUND), flavor, parts)
    assert {p: e["status"] for p, e in found.items()} == dict.fromkeys(parts, "measured")
    one = found["part1"]["values"]
    assert one["zero32"] == "149" and one["last32"] == "0" and float(one["last64"]) > 0
    two = found["part2"]["values"]
    assert float(two["growth"]) < 1.2 * two["ratio"] < float(two["hs_growth"])
    assert two["depth2"] - two["depth1"] <= 8
    three = found["part3"]["values"]
    assert three["last"] == "1" and three["first"] == three["expected"]
    if flavor == "torch":
        four = found["part4"]["values"]
        assert four["count"] == 3 and four["yours"] == 2 * four["td"] + 4
        assert four["nodes"] == 1 and four["loop_nodes"] > 100 and four["loop_count"] > 100
    for part, seen in found.items():
        followup = followup_for(ROUND, part, flavor)
        assert followup is not None
        text = model_answer(followup, seen)
        assert "{" not in text


def test_the_work_follow_up_shows_hillis_steele_on_their_code(worker: Worker,
                                                               tmp_path: Path) -> None:
    files = solution("part2_hillis_steele", ROUND.id).files("numpy")
    root = write_workspace(tmp_path, "numpy", files=files, round_=ROUND)
    values = evidence(worker, root, "numpy", ["part2"])["part2"]["values"]
    assert float(values["growth"]) > 1.5 * values["ratio"]


@pytest.mark.parametrize(("name", "shown"), [
    ("affine-maps", "commutative: False"),
    ("blelloch-scan", "6 levels for T=6 (padded to 8); scan equals loop: True"),
    ("work-depth", "Hillis-Steele 1793 in 8 levels; Blelloch 510 in 16 levels"),
    ("reverse-scan", "dh0 == a[0] * g[0]: True"),
    ("long-products", "float32: product after 300 steps 0, exactly 0 from step 149"),
    ("custom-function", "only a requires grad: ['tensor', None]"),
])
def test_demonstrations_show_what_the_text_claims(name: str, shown: str) -> None:
    printed = "".join(output for _, output in run_demos(topics(ROUND)[name]))
    assert shown in printed
    assert "Error" not in printed


# --- the real CLI ------------------------------------------------------------------------------


def test_the_cli_names_the_mistake(tmp_path: Path, runner: CliRunner) -> None:
    """`grader check`'s scorecard (the references' full marks are selfcheck's to prove, and the
    known-good solutions' the matrix's; the command as a process is test_cli's)."""
    stale = solution("part2_stale_down_sweep", ROUND.id).files("numpy")
    buggy = write_workspace(tmp_path, "numpy", files=stale, round_=ROUND)
    done = runner.invoke(cli, ["check", "part2", "--seed", "5", "--workspace", str(buggy)])
    assert done.exit_code == 1, done.output
    shown = " ".join(done.stdout.split())
    assert "✗ failed part2.correctness" in shown
    assert "hint: the down-sweep reads a slot it has already overwritten" in shown
    # Its properties (dtype, inputs unchanged, work, no loop in a level) are worth the half of the
    # points of values it earned.
    assert "Score 18.125/35.0 · 8 passed, 1 failed" in shown
