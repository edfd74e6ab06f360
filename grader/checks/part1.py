"""Part 1 checks: the in-place forward `prefix_products_out(W, P)` and its EXPLANATION."""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from grader.checks import truth
from grader.checks.api import Api
from grader.checks.base import Context, Plan, Verdict, check, failed, passed
from grader.checks.cases import Case, make_case, make_cases
from grader.checks.common import (
    Observation,
    call_each,
    format_raised,
    inputs_unchanged_plan,
    judge_cases,
    raised_verdict,
    validation_plan,
)
from grader.checks.compare import matches
from grader.checks.mistakes import INPLACE_MISTAKES

FUNCTION = "prefix_products_out"
GENERIC_HINT = "P[0] = W[0], then P[i] = P[i-1] @ W[i] for i = 1 .. N-1, written into P."


def _into_nan_buffer(api: Api, case: Case) -> tuple[Any, Any]:
    return api.backend.native(case.W), api.backend.nan_buffer(case.W.shape, case.dtype)


def _read_buffer(api: Api, args: tuple[Any, ...], value: Any) -> np.ndarray:
    """What landed in the caller's P (not what was returned)."""
    return api.backend.to_numpy(args[1], "P")


@check("part1.validation", "Raises ValueError for a malformed W or a P of the wrong shape", 3)
def validation(ctx: Context) -> Plan:
    return validation_plan(FUNCTION, arity=2)


@check("part1.correctness", "Fills P (prefilled with NaN) with the right products", 6)
def correctness(ctx: Context) -> Plan:
    cases = make_cases(ctx.rng())

    def probe(api: Api) -> list[Observation]:
        fn = api.function(FUNCTION)
        return call_each(api, fn, cases, _into_nan_buffer, _read_buffer)

    def judge(observed: list[Observation]) -> Verdict:
        return judge_cases(cases, observed, lambda c: truth.forward(c.W), "P", INPLACE_MISTAKES,
                           ctx.seed, "part1", GENERIC_HINT)

    return Plan(probe, judge)


@check("part1.empty", "N = 0 returns P untouched", 1)
def empty(ctx: Context) -> Plan:
    def probe(api: Api) -> Observation:
        W = api.backend.native(np.zeros((0, 3, 3)))
        P = api.backend.native(np.zeros((0, 3, 3)))
        value, raised = api.call(api.function(FUNCTION), W, P)
        return {"raised": raised.as_dict() if raised else None, "is_p": value is P}

    def judge(obs: Observation) -> Verdict:
        if obs["raised"]:
            return failed(f"W of shape (0, 3, 3) raised {format_raised(obs['raised'])}",
                          hint="With N == 0 there is nothing to compute: return P at once "
                          "(P[0] = W[0] would index out of range).")
        if not obs["is_p"]:
            return failed("W of shape (0, 3, 3): did not return P itself")
        return passed()

    return Plan(probe, judge)


@check("part1.returns_p", "Returns the very object P it was given", 1)
def returns_p(ctx: Context) -> Plan:
    case = make_case(ctx.rng(), 5, 3)

    def probe(api: Api) -> Observation:
        W, P = _into_nan_buffer(api, case)
        value, raised = api.call(api.function(FUNCTION), W, P)
        return {"raised": raised.as_dict() if raised else None, "is_p": value is P,
                "returned": type(value).__name__}

    def judge(obs: Observation) -> Verdict:
        if obs["raised"]:
            return raised_verdict(case.describe(), obs['raised'])
        if not obs["is_p"]:
            return failed(f"{case.describe()}: returned a different {obs['returned']}, not P",
                          hint="Return the caller's buffer itself (`return P`), so "
                          "`prefix_products_out(W, P) is P`.")
        return passed()

    return Plan(probe, judge)


@check("part1.storage", "Writes into P's own memory, keeping a non-contiguous P's strides", 2)
def storage(ctx: Context) -> Plan:
    case = make_case(ctx.rng(), 6, 3)

    def probe(api: Api) -> Observation:
        W = api.backend.native(case.W)
        P = api.backend.nan_buffer(case.W.shape, case.dtype, contiguous=False)
        address, strides = api.backend.address(P), api.backend.strides(P)
        _, raised = api.call(api.function(FUNCTION), W, P)
        return {
            "raised": raised.as_dict() if raised else None,
            "same_address": api.backend.address(P) == address,
            "strides": [strides, api.backend.strides(P)],
            "value": api.backend.to_numpy(P, "P"),
        }

    def judge(obs: Observation) -> Verdict:
        where = f"{case.describe()}, P a non-contiguous (column-major) buffer"
        if obs["raised"]:
            return failed(f"{where}: raised {format_raised(obs['raised'])}",
                          hint="P may be any strided view: index it (P[i] = ...) rather "
                          "than assuming a contiguous layout.")
        if not obs["same_address"] or obs["strides"][0] != obs["strides"][1]:
            return failed(f"{where}: P's data pointer or strides changed {obs['strides']}",
                          hint="Write values into P's existing memory (P[i] = ..., or "
                          "P.copy_ / P[...] = ...); never resize, set_ or rebind it.")
        if not matches(obs["value"], truth.forward(case.W), case.dtype):
            return failed(f"{where}: P does not hold the prefix products afterwards",
                          hint="The caller reads the answer from P: write every slot into it.")
        return passed()

    return Plan(probe, judge)


@check("part1.inputs_unchanged", "Leaves W unchanged", 1)
def inputs_unchanged(ctx: Context) -> Plan:
    case = make_case(ctx.rng(), 7, 3)

    def run(api: Api, inputs: dict[str, Any]) -> Any:
        P = api.backend.nan_buffer(case.W.shape, case.dtype)
        return api.call(api.function(FUNCTION), inputs["W"], P)[1]

    return inputs_unchanged_plan(case, run, "Only P is output (a separate buffer here); read "
                                 "W, never write it.")


@check("part1.aliasing", "Works when P is W (the input buffer becomes the output)", 3)
def aliasing(ctx: Context) -> Plan:
    cases = [make_case(ctx.rng(), n, d) for n, d in ((2, 2), (5, 3), (9, 4))]

    def probe(api: Api) -> list[Observation]:
        def same_buffer(api: Api, case: Case) -> tuple[Any, Any]:
            W = api.backend.native(case.W)
            return W, W

        return call_each(api, api.function(FUNCTION), cases, same_buffer, _read_buffer)

    def judge(observed: list[Observation]) -> Verdict:
        verdict = judge_cases(cases, observed, lambda c: truth.forward(c.W), "P", (), ctx.seed,
                              "part1", "")
        if verdict.status == "passed":
            return passed(f"P is W gave the right products for {len(cases)} shapes")
        return failed(
            "called with P is W: " + verdict.message,
            hint="When P is W, writing P[i] destroys W[i]: make sure each W[i] is read before "
            "slot i is written, and never let a matmul write into one of its own operands "
            "(e.g. matmul(..., out=P[i]) while reading W[i]): compute into a temporary, then "
            "assign.",
        )

    return Plan(probe, judge)


@check("part1.memory", "Uses O(D^2) extra memory, not a scratch copy of the stack", 2)
def memory(ctx: Context) -> Plan:
    case = make_case(ctx.rng(), 256, 4)
    stack_bytes = case.W.nbytes

    def probe(api: Api) -> Observation:
        W, P = _into_nan_buffer(api, case)
        _, extra = api.backend.extra_memory(api.function(FUNCTION), W, P)
        return {"extra": extra}

    def judge(obs: Observation) -> Verdict:
        extra = obs["extra"]
        summary = f"{case.describe()}: {extra} bytes extra; the whole stack is {stack_bytes}"
        if extra >= stack_bytes // 2:
            return failed(summary, hint="That is an O(N*D^2) scratch copy (a clone, a stack, "
                          "a list of every product): write each product straight into P[i]; "
                          "one D x D temporary is all the memory this needs.")
        return passed(summary)

    return Plan(probe, judge)


# The ideas an interviewer listens for, each with the words that show it was said.
IDEAS: tuple[tuple[str, str], ...] = (
    ("in-place writes bump the tensor's version counter", r"version"),
    ("autograd saves tensors for the backward pass",
     r"\bsav(e|ed|es|ing)\b|save_for_backward|\bkeeps?\b|\bcach(e|ed|es)\b|\bstor(e|ed|es)\b"),
    ("those saved values are overwritten before backward reads them",
     r"overwr|mutat|modif|clobber|\bchang(e|ed|es)\b|\bdestroy"),
    ("the fix: out-of-place (torch.stack of new tensors) or a custom Function with mark_dirty",
     r"out[- ]of[- ]place|mark_dirty|mark dirty|\bstack\b|\bclone\b|new tensor|custom "
     r"(autograd )?function"),
)


@check("part1.explanation", "EXPLANATION says why a naive in-place matmul breaks autograd", 1)
def explanation(ctx: Context) -> Plan:
    def probe(api: Api) -> Observation:
        text = getattr(api.module, "EXPLANATION", None)
        return {"text": text if isinstance(text, str) else None,
                "type": type(text).__name__ if hasattr(api.module, "EXPLANATION") else None}

    def judge(obs: Observation) -> Verdict:
        text = obs["text"]
        if obs["type"] is None:
            return failed("part1_inplace.py has no EXPLANATION: add `EXPLANATION = \"...\"` with "
                          "a few sentences on why a naive in-place matmul breaks autograd",
                          hint=_ideas_hint(IDEAS))
        if text is None:
            return failed(f"EXPLANATION should be a string, found {obs['type']}")
        if not text.strip():
            return failed("not implemented yet: EXPLANATION is empty; write a few sentences on "
                          "why a naive in-place matmul breaks autograd", hint=_ideas_hint(IDEAS))
        missed = [idea for idea, pattern in IDEAS if not re.search(pattern, text, re.I)]
        covered = len(IDEAS) - len(missed)
        if missed:
            return failed(f"covers {covered} of {len(IDEAS)} key ideas", fraction=covered /
                          len(IDEAS), hint=_ideas_hint(missed))
        return passed(f"covers all {len(IDEAS)} key ideas")

    return Plan(probe, judge)


def _ideas_hint(missed: Any) -> str:
    names = [m if isinstance(m, str) else m[0] for m in missed]
    return "Not yet said: " + "; ".join(names) + "."
