"""The check kinds that rounds share, each on a tiny round written for it (the tiny-sum round
with rows of that kind added): `grader check` on candidate code right, wrong in a known way and
hostile, with exact verdicts; and the table errors a malformed row of the kind raises at load.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from tiny_round import ROUND_ID, write_tiny_round

import grader.runner
from grader.checks.table import round_checks
from grader.cli import cli
from grader.engine.rounds import EXTRA_ROUNDS_ENV, Round, RoundError
from grader.runner import Worker

from helpers import LentWorker

KIND_CHECKS = '''
[[check]]
id = "part1.runs"
kind = "compare_runs"
title = "Each run's total equals the reference's; a matrix raises"
points = 2
cases = "runs"
truth = "run_truth"
fields = ["total", "size"]
at_most = { size = 6 }
mistakes = ["drops-first"]
hint = "Add every entry of x."
validation_hint = "x must be a vector: raise ValueError for anything else."

[[check]]
id = "part1.twice"
kind = "runs_agree"
title = "The same x gives the same total twice"
points = 1
case = "one_vector"
run = "twice"
options = { function = "total" }
condition = "x passed again"
failure = "{where}: the second total differs from the first: {difference}"
name = "the second total"
passed = "the same total twice"
hint = "Read x, never write it."

[[check]]
id = "part1.gradient"
kind = "finite_differences"
title = "Nudging each entry of x by 1 moves the total by 1"
points = 1
run = "total_grads"
case = "one_vector"
loss = "scaled_sum"
loss_name = "sum(x)"
wrt = ["x"]
hints = { x = "Every entry counts once in the total." }

[[check]]
id = "part1.dtype"
kind = "keeps_dtype"
title = "The total keeps x's dtype"
points = 1
function = "total"
cases = "vectors"
args = ["x"]
name = "the total"
hint = "Sum in x's own dtype: a float64 accumulator promotes a float32 x."

[[check]]
id = "part1.as_float"
kind = "returns_float"
title = "The total is a Python float"
points = 1
function = "total"
cases = "vectors"
args = ["x"]
name = "the total"
hint = "Return float(...) of the sum."

[[check]]
id = "part1.function"
kind = "autograd_function"
title = "total goes through Total.apply, a torch 2 style autograd.Function"
points = 1
flavors = ["torch"]
case = "one_vector"
class = "Total"
function = "total"
args = ["x"]
not_function_hint = "Define `class Total(torch.autograd.Function)`."
bypass_hint = "total must return Total.apply(x)."
old_style_hint = "Give Total a setup_context of its own."

[[check]]
id = "part1.gradcheck"
kind = "gradcheck"
title = "gradcheck passes with x requiring grad"
points = 1
flavors = ["torch"]
case = "one_vector"
function = "total"
inputs = ["x"]
grads = "total_autograd"
gradients = "ones_of"
through = "your total"
hint = "Your backward disagrees with finite differences of your forward."
wrong_hint = "See part1.runs."

[[check]]
id = "part1.needs"
kind = "needs_input_grad"
title = "Total's backward returns dx, computed without a matmul"
points = 1
flavors = ["torch"]
case = "with_upstream"
function = "total"
args = ["x"]
upstream = "g"
gradients = "ones_of"
none_hint = "None where no gradient is needed."
arity_hint = "One entry per input of forward: (dx,)."
wrong_hint = "See part1.gradcheck."
flops = "no_flops"
computed_hint = "dx needs no matmul."

[mistakes.drops-first]
match = "drops_first"
hint = "the first entry is left out: start the sum at x[0]."
'''

KIND_JUDGE = '''

def runs(rng):
    valid = [Case({"x": rng.standard_normal(n)}, (("N", n),), extra={"run": "sum_run"})
             for n in (1, 3, 6)]
    matrix = Case({"x": rng.standard_normal((2, 2))}, (("N", 4),), label="x is a matrix",
                  extra={"run": "sum_run", "malformed": True})
    return valid + [matrix]


def run_truth(case):
    return {"total": np.asarray(case["x"].sum()), "size": case["x"].size}


def scaled_sum(inputs, case):
    return float(inputs["x"].sum() * case.extra.get("scale", 1.0))


def ones_of(case):
    return {"dx": np.ones_like(case["x"])}


def with_upstream(rng):
    return Case({"x": rng.standard_normal(4), "g": np.asarray(1.0)}, (("N", 4),))


def no_flops(case):
    return 0


def drops_first(case, actual):
    return isinstance(actual, dict) and "total" in actual and bool(
        np.isclose(actual["total"], case["x"][1:].sum()))
'''

KIND_PROBES = '''

def sum_run(api, case):
    """total(x), and how many entries x has, as the run's table."""
    x = api.backend.native(__import__("numpy").asarray(case["inputs"]["x"]))
    value, raised = api.call(api.function("total"), x)
    if raised is not None:
        return {"value": None, "raised": raised.as_dict()}
    return {"value": {"total": api.backend.to_numpy(value, "total's result"),
                      "size": int(x.size)}, "raised": None}


def total_grads(api, case):
    """dx by nudging each entry of x by 1 (exact for a sum): the total's gradient."""
    np = __import__("numpy")
    x = np.asarray(case["inputs"]["x"], dtype=np.float64)
    fn = api.function("total")
    totals = []
    for i in range(-1, x.size):
        nudged = x.copy()
        if i >= 0:
            nudged[i] += 1.0
        value, raised = api.call(fn, api.backend.native(nudged))
        if raised is not None:
            return {"value": None, "raised": raised.as_dict()}
        totals.append(float(api.backend.to_numpy(value, "total's result")))
    return {"value": {"dx": np.array(totals[1:]) - totals[0]}, "raised": None}


def total_autograd(api, case):
    """x.grad after total(x).backward(), x a float64 leaf."""
    import torch
    x = torch.tensor(case["inputs"]["x"], dtype=torch.float64, requires_grad=True)
    value, raised = api.call(lambda: api.function("total")(x).backward())
    if raised is not None:
        return {"value": None, "raised": raised.as_dict()}
    return {"value": {"dx": x.grad.numpy().copy()}, "raised": None}


def twice(api, case, function):
    """`function` called twice on one native x."""
    x = api.backend.native(__import__("numpy").asarray(case["inputs"]["x"]))
    found = []
    for _ in range(2):
        value, raised = api.call(api.function(function), x)
        if raised is not None:
            return {"raised": raised.as_dict()}
        found.append(api.backend.to_numpy(value, "total's result"))
    return {"raised": None, "first": found[0], "second": found[1]}
'''


def write_kinds_round(folder: Path) -> Path:
    root = write_tiny_round(folder)
    for name, added in (("checks.toml", KIND_CHECKS), ("checks.py", KIND_JUDGE),
                        ("probes.py", KIND_PROBES)):
        (root / name).write_text((root / name).read_text() + added)
    return root


@pytest.fixture(scope="module")
def runner(tmp_path_factory: pytest.TempPathFactory) -> Iterator[CliRunner]:
    folder = tmp_path_factory.mktemp("kinds-rounds")
    write_kinds_round(folder)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(EXTRA_ROUNDS_ENV, str(folder))
        with Worker() as worker:
            patch.setattr(grader.runner, "Worker", lambda **_: LentWorker(worker))
            yield CliRunner(env={"COLUMNS": "120"})


def checked(runner: CliRunner, workspace: Path, body: str, flavor: str = "numpy",
            head: str = "") -> dict[str, dict[str, Any]]:
    """`grader check --json` on total(x) written as `body` (after `head`, in the module): each
    check's result by id."""
    if not workspace.exists():
        made = runner.invoke(cli, ["init", "--round", ROUND_ID, "--flavor", flavor,
                                   str(workspace)])
        assert made.exit_code == 0, made.output
    (workspace / "exercises" / "part1_sum.py").write_text(
        "import numpy as np\n" + ("import torch\n" if flavor == "torch" else "") + head
        + "\n\ndef total(x):\n" + body)
    result = runner.invoke(cli, ["check", "--json", "--workspace", str(workspace)],
                           catch_exceptions=False)
    assert "Traceback" not in result.output
    doc = json.loads(result.stdout)
    return {c["id"]: c for part in doc["parts"] for c in part["checks"]}


RIGHT = ("    if np.ndim(x) != 1:\n        raise ValueError('x must be a vector')\n"
         "    return x.sum()\n")


def test_right_code_written_unusually_passes_both(runner: CliRunner, tmp_path: Path) -> None:
    unusual = ("    if len(np.shape(x)) - 1:\n        raise ValueError('not a vector')\n"
               "    return np.add.reduce(x[::-1])\n")
    for body in (RIGHT, unusual):
        found = checked(runner, tmp_path / "ws", body)
        assert found["part1.runs"]["status"] == "passed", found["part1.runs"]
        assert found["part1.runs"]["message"] == (
            "3 cases matched (N from 1 to 6, float64); ValueError for all 1 malformed inputs")
        assert found["part1.twice"]["status"] == "passed"
        assert found["part1.twice"]["message"] == "the same total twice"
        assert found["part1.gradient"]["status"] == "passed"
        assert found["part1.gradient"]["message"] == "dx agree with central differences"
        assert found["part1.dtype"]["message"] == ("every result keeps the inputs' dtype "
                                                   "(float64 and float32)")


def test_compare_runs_names_the_known_mistake(runner: CliRunner, tmp_path: Path) -> None:
    found = checked(runner, tmp_path / "ws", RIGHT.replace("x.sum()", "x[1:].sum()"))["part1.runs"]
    assert found["status"] == "failed"
    assert found["message"].startswith("N=1, float64: total")
    # The listed mistake's hint, then the one change to the candidate's own line that makes the
    # run right (a repair of the file, compared as the check compares its runs).
    assert found["hint"].startswith("the first entry is left out: start the sum at x[0]. Your ")
    assert "once your `return x[1:].sum()` reads `return x[0:].sum()`" in found["hint"]


def test_finite_differences_over_a_list_of_inputs(runner: CliRunner, tmp_path: Path) -> None:
    found = checked(runner, tmp_path / "ws", RIGHT.replace("x.sum()", "x[1:].sum()"))
    gradient = found["part1.gradient"]
    assert gradient["status"] == "failed"
    assert gradient["message"].startswith("N=4, float64, loss sum(x), eps 1e-06: dL/dx[0] by "
                                          "finite differences is 1, yours is 0")
    assert gradient["hint"] == "Every entry counts once in the total."


def test_compare_runs_wants_malformed_input_rejected(runner: CliRunner, tmp_path: Path) -> None:
    found = checked(runner, tmp_path / "ws", "    return x.sum()\n")["part1.runs"]
    assert found["status"] == "failed"
    assert found["message"] == "x is a matrix: returned normally; expected ValueError"
    assert found["hint"] == "x must be a vector: raise ValueError for anything else."


def test_compare_runs_at_most_and_a_raise_on_valid_input(runner: CliRunner,
                                                       tmp_path: Path) -> None:
    raising = checked(runner, tmp_path / "ws", "    raise KeyError('no')\n")["part1.runs"]
    assert raising["status"] == "failed"
    assert raising["message"].startswith("N=1, float64: raised KeyError: 'no'")


def test_hostile_results_fail_without_a_traceback(runner: CliRunner, tmp_path: Path) -> None:
    body = ("    class Sly:\n        def __array__(self, *a, **k):\n"
            "            raise RuntimeError('gotcha')\n"
            "        def __eq__(self, other):\n            return True\n"
            "    if np.ndim(x) != 1:\n        raise ValueError('no')\n    return Sly()\n")
    found = checked(runner, tmp_path / "ws", body)
    assert found["part1.runs"]["status"] == "failed"
    assert found["part1.twice"]["status"] == "failed"
    assert "total's result" in found["part1.runs"]["message"]


def test_a_library_s_not_implemented_is_no_unfilled_stub(runner: CliRunner,
                                                        tmp_path: Path) -> None:
    """NotImplementedError from the stub's own `raise` means "not implemented yet"; one raised
    inside a library the code called (torch's on vmap's wrappers, here the standard library's)
    is an error of the code, said as such."""
    stub = checked(runner, tmp_path / "ws", "    raise NotImplementedError('write total')\n")
    library = checked(runner, tmp_path / "ws",
                      "    import numbers\n    return numbers.Integral.__int__(x)\n")
    assert {(c["status"], c["message"]) for c in stub.values()} == {
        ("failed", "not implemented yet (write total)")}
    assert {c["status"] for c in library.values()} == {"error"}
    assert all(c["message"].startswith("NotImplementedError: \n  at exercises/part1_sum.py")
               for c in library.values()), library


def test_keeps_dtype_names_the_promoted_result(runner: CliRunner, tmp_path: Path) -> None:
    body = RIGHT.replace("x.sum()", "np.float64(x.sum())")
    found = checked(runner, tmp_path / "ws", body)["part1.dtype"]
    assert found["status"] == "failed"
    assert found["message"] == "N=1, float32: the total is float64"
    assert found["hint"] == "Sum in x's own dtype: a float64 accumulator promotes a float32 x."


@pytest.mark.parametrize(("result", "status", "message"), [
    ("float(x.sum())", "passed", "the total is a Python float in every case"),
    ("np.float64(x.sum())", "passed", "the total is a Python float in every case"),
    ("x.sum()", "failed", "N=1, float32: the total is of type numpy.float32, not a Python float"),
    ("np.asarray(float(x.sum()))", "failed",
     "N=1, float64: the total is of type numpy.ndarray, not a Python float"),
    ("type('Loss', (float,), {})(x.sum())", "failed",
     "N=1, float64: the total is of type exercises.part1_sum.Loss, not a Python float"),
])
def test_returns_float_names_what_came_back(runner: CliRunner, tmp_path: Path, result: str,
                                            status: str, message: str) -> None:
    found = checked(runner, tmp_path / "ws", RIGHT.replace("x.sum()", result))["part1.as_float"]
    assert found["status"] == status
    assert found["message"].partition("; worth")[0] == message  # a property: see results.py
    # The tiny round's reference is one statement: no function of it lines up enough for a
    # hint to show the lines a file differs at (apart.py).
    assert found["hint"] == (None if status == "passed" else "Return float(...) of the sum.")


FUNCTION = """
class Total(torch.autograd.Function):
    @staticmethod
    def forward(x):
        return x.sum()

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs[0])

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * torch.ones_like(x)
"""
OLD_STYLE = """
class Total(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x.sum()

    @staticmethod
    def backward(ctx, g):
        return g
"""


@pytest.mark.parametrize(("head", "body", "status", "message", "hint"), [
    (FUNCTION, "    return Total.apply(x)\n", "passed", "total(x).grad_fn is TotalBackward",
     None),
    (FUNCTION, "    return x.sum()\n", "failed",
     "total(x).grad_fn is SumBackward0, not Total's backward node",
     "total must return Total.apply(x)."),
    (OLD_STYLE, "    return Total.apply(x)\n", "failed",
     "Total has no setup_context of its own: forward(ctx, ...) is the old style",
     "Give Total a setup_context of its own."),
    ("class Total:\n    pass\n", "    return x.sum()\n", "failed",
     "Total is a class that does not subclass torch.autograd.Function",
     "Define `class Total(torch.autograd.Function)`."),
    ("Total = 'not a class'\n", "    return x.sum()\n", "failed", None, None),
])
def test_autograd_function(runner: CliRunner, tmp_path: Path, head: str, body: str,
                           status: str, message: str | None, hint: str | None) -> None:
    found = checked(runner, tmp_path / "ws", body, "torch", head)["part1.function"]
    assert found["status"] == status, found
    if message is not None:
        assert found["message"] == message and found.get("hint") == hint
    else:  # what is not a class at all is named, without a traceback
        assert "Total" in found["message"]


ONLY_X = "N=4, float64, only x requiring grad: "


@pytest.mark.parametrize(("check", "backward", "status", "message", "hint"), [
    ("gradcheck", "g * torch.ones_like(x)", "passed",
     "gradcheck passed (float64, slow mode, x requiring grad)", None),
    ("gradcheck", "2 * g * torch.ones_like(x)", "failed",
     "N=4, float64: gradcheck raised GradcheckError",
     "Your backward disagrees with finite differences of your forward."),
    ("needs", "g * torch.ones_like(x)", "passed",
     "with one input requiring grad, backward returned its gradient alone (None for the others)",
     None),
    ("needs", "(g * torch.ones_like(x), None)", "failed",
     ONLY_X + "backward returned a tuple, not one entry per input of forward",
     "One entry per input of forward: (dx,)."),
    ("needs", "g * torch.ones_like(x) + 0 * (x @ x)", "failed",
     ONLY_X + "backward did 8 matmul flops; one gradient takes 0", "dx needs no matmul."),
    ("needs", "2 * g * torch.ones_like(x)", "failed", ONLY_X + "first wrong entry dx[0]",
     "See part1.gradcheck."),
])
def test_the_backward_of_a_function(runner: CliRunner, tmp_path: Path, check: str,
                                    backward: str, status: str, message: str,
                                    hint: str | None) -> None:
    """gradcheck with every input requiring grad, and needs_input_grad calling the node."""
    head = FUNCTION.replace("g * torch.ones_like(x)", backward)
    found = checked(runner, tmp_path / "ws", "    return Total.apply(x)\n", "torch",
                    head)[f"part1.{check}"]
    assert found["status"] == status, found
    assert found["message"].startswith(message) and found.get("hint") == hint


def test_runs_agree_catches_code_that_writes_into_its_input(runner: CliRunner,
                                                            tmp_path: Path) -> None:
    body = RIGHT.replace("    return x.sum()\n", "    x *= 2\n    return x.sum() / 2\n")
    found = checked(runner, tmp_path / "ws", body)
    twice = found["part1.twice"]
    assert twice["status"] == "failed"
    assert twice["message"].startswith("N=4, float64, x passed again: the second total "
                                       "differs from the first: the second total")
    assert twice["hint"] == "Read x, never write it."
    assert found["part1.runs"]["status"] == "passed"


@pytest.mark.parametrize(("old", "new", "error"), [
    ('failure = "{where}: the second total differs from the first: {difference}"',
     'failure = "they differ"', r"part1.twice: failure must say where the \{difference\} goes"),
    ('options = { function = "total" }', 'options = "total"',
     "part1.twice: options must be a table of the run's other arguments"),
    ('run = "twice"', 'run = "thrice"', "part1.twice: run = 'thrice': probes.py has no such"),
    ('truth = "run_truth"', 'truth = "nope"', "part1.runs: truth = 'nope': checks.py has no"),
    ('at_most = { size = 6 }', 'at_most = { size = 6 }\ncolour = 1',
     r"part1.runs: unknown key\(s\) colour"),
    ('hint = "Add every entry of x."\nvalidation', 'validation',
     "part1.runs: missing hint"),
    ('hints = { x = ', 'hints = { y = ', "part1.gradient: hints name inputs not in wrt: y"),
    ('wrt = ["x"]', 'wrt = ["x"]\nforward = { entry = "total" }',
     "part1.gradient: forward must be a table of entry, truth and says"),
    ('wrt = ["x"]', 'wrt = ["x"]\nforward = { entry = "total", truth = "nope", says = "no" }',
     "part1.gradient: forward.truth = 'nope': checks.py has no such function"),
    ('name = "the total"', 'name = "the total"\nfields = "total"',
     "part1.dtype: fields must be a list of strings"),
    ('name = "the total"', 'name = "the total"\nrun = "nope"',
     "part1.dtype: run = 'nope': probes.py has no such function"),
    ('args = ["x"]\nnot_function_hint', 'args = ["x"]\nwrt = ["y"]\nnot_function_hint',
     "part1.function: wrt names inputs not in args"),
    ('bypass_hint = "total must return Total.apply(x)."\n', '',
     "part1.function: missing bypass_hint"),
    ('grads = "total_autograd"', 'grads = "nope"',
     "part1.gradcheck: grads = 'nope': probes.py has no such function"),
    ('through = "your total"\n', '', "part1.gradcheck: missing through"),
    ('flops = "no_flops"\ncomputed_hint = "dx needs no matmul."\n', '',
     None),
    ('computed_hint = "dx needs no matmul."\n', '', "part1.needs: missing computed_hint"),
    ('flops = "no_flops"\ncomputed_hint = "dx needs no matmul."\n',
     'computed_hint = "dx needs no matmul."\n', r"part1.needs: unknown key\(s\) computed_hint"),
    ('id = "part1.runs"\nkind = "compare_runs"',
     'id = "part1.runs"\nkind = "compare_runs"\nmeasured = false',
     "part1.runs: measured is a custom row's key: a compare_runs check's kind says whether it "
     "is measured"),
    ('loss = "scaled_sum"', 'loss = "truth"', None),
    ('loss = "scaled_sum"', 'loss = "three_arguments"',
     r"part1.gradient: three_arguments must take \(inputs\) or \(inputs, case\)"),
])
def test_table_errors_name_the_check(tmp_path: Path, old: str, new: str,
                                     error: str | None) -> None:
    root = write_kinds_round(tmp_path)
    checks = root / "checks.toml"
    text = checks.read_text()
    assert old in text
    checks.write_text(text.replace(old, new))
    judge = root / "checks.py"
    judge.write_text(judge.read_text() + "\n\ndef three_arguments(a, b, c):\n    return 0.0\n")
    if error is None:  # a loss of one argument is as good as one of two
        assert round_checks(Round.load(root))
        return
    with pytest.raises(RoundError, match=error):
        round_checks(Round.load(root))
