"""`grader explain TOPIC`: short explanations of the ideas the checks' hints and the follow-ups
refer to, each with small live demonstrations.

A demonstration is a snippet of Python that is run (in this process: no candidate code is
involved) and shown next to what it printed, so the code on the screen is exactly the code that
produced the output. Snippets share one namespace per topic, with torch imported and seeded.
Importing this module does not import torch; running a demonstration does.
"""

from __future__ import annotations

import contextlib
import io
import traceback
import warnings
from dataclasses import dataclass


@dataclass(frozen=True)
class Topic:
    name: str
    summary: str
    text: str
    demos: tuple[str, ...] = ()


TOPICS: tuple[Topic, ...] = (
    Topic(
        "version-counter",
        "why writing into a tensor autograd saved makes backward fail",
        "Every tensor has a version counter, shared with all of its views; each in-place write "
        "(x[i] = ..., x += ..., x.copy_(...), any op ending in _) increments it. When an "
        "operation saves a tensor for its backward (matmul saves both operands: for Y = A @ B, "
        "dA = G @ B^T needs B and dB = A^T @ G needs A) autograd "
        "records the counter's value. At backward time it compares: if the counter moved, it "
        "raises 'one of the variables needed for gradient computation has been modified by an "
        "inplace operation ... is at version 4; expected version 3' instead of computing a "
        "gradient from values that may have changed. It cannot tell which slice a write "
        "touched, so writing P[i] after a matmul saved P[i-1] (a view of the same P) is "
        "enough. torch.autograd.set_detect_anomaly(True) names the forward line that created "
        "the failing operation. Fixes: build the result out of place, or wrap the in-place "
        "kernel in an autograd.Function that calls ctx.mark_dirty (see mark-dirty).",
        (
            "P = torch.zeros(3, 2, 2)\n"
            "print('version of P:', P._version)\n"
            "P[1] = torch.ones(2, 2)            # write through a view of P\n"
            "print('after one write:', P._version, '(and P[0] sees', P[0]._version, 'too)')",
            "W = torch.randn(4, 3, 3, dtype=torch.float64, requires_grad=True)\n"
            "P = torch.empty_like(W)\n"
            "P[0] = W[0]\n"
            "for i in range(1, 4):\n"
            "    P[i] = P[i - 1] @ W[i]   # matmul saves P[i-1]; the write bumps P's counter\n"
            "try:\n"
            "    P.sum().backward()\n"
            "except RuntimeError as error:\n"
            "    print(error)",
            "products = [W[0]]            # the out-of-place fix: new tensors, never written\n"
            "for i in range(1, 4):\n"
            "    products.append(products[-1] @ W[i])\n"
            "torch.stack(products).sum().backward()\n"
            "print('backward ran; W.grad has shape', tuple(W.grad.shape))",
        ),
    ),
    Topic(
        "leaf-inplace",
        "why autograd forbids writing into W itself",
        "A leaf is a tensor the user created with requires_grad=True (not the result of an "
        "operation); backward accumulates its gradient in .grad, the derivative at the values "
        "it holds. Writing into a leaf, or into a view of it, would change those values behind "
        "autograd's back, so torch refuses at the write, already in the forward: 'a leaf "
        "Variable that requires grad is being used in an in-place operation' (or 'a view of a "
        "leaf Variable ...'). That is what `prefix_products_out(W, W)` meets when W is a "
        "parameter. Optimizers do update leaves in place, but under torch.no_grad(), where "
        "nothing is recorded. A clone is not a leaf: in-place writes on it are recorded (and "
        "then subject to the version counter).",
        (
            "W = torch.randn(2, 2, requires_grad=True)\n"
            "print('leaf?', W.is_leaf)\n"
            "try:\n"
            "    W[0] = 0.0\n"
            "except RuntimeError as error:\n"
            "    print(error)",
            "with torch.no_grad():\n"
            "    W -= 0.1 * torch.ones(2, 2)       # an optimizer step: allowed, not recorded\n"
            "V = W.clone()                          # not a leaf\n"
            "V[0] = 0.0                             # recorded as an in-place copy\n"
            "print('still a leaf:', W.is_leaf, '| V.grad_fn:', type(V.grad_fn).__name__)",
        ),
    ),
    Topic(
        "mark-dirty",
        "keeping an in-place kernel inside a custom autograd.Function",
        "torch.autograd.Function lets you own both directions: forward(*inputs) computes "
        "(autograd records nothing inside it), setup_context(ctx, inputs, output) saves what "
        "backward needs with ctx.save_for_backward, and backward(ctx, *grads) returns one "
        "gradient per input (None for inputs without one). An input the forward modified in "
        "place must be declared with ctx.mark_dirty(tensor) and returned as an output: autograd "
        "then rewires that tensor's history to this Function, instead of failing later on a "
        "stale version. Here the backward recomputes the products out of place and lets "
        "autograd differentiate them; Part 3 replaces that with a hand-written sweep. Check "
        "any such Function with gradcheck.",
        (
            "class PrefixProductsOut(torch.autograd.Function):\n"
            "    @staticmethod\n"
            "    def forward(W, P):\n"
            "        P[0] = W[0]\n"
            "        for i in range(1, W.shape[0]):\n"
            "            P[i] = P[i - 1] @ W[i]      # nothing is recorded in here\n"
            "        return P\n"
            "\n"
            "    @staticmethod\n"
            "    def setup_context(ctx, inputs, output):\n"
            "        W, P = inputs\n"
            "        ctx.mark_dirty(P)               # P was written in place and is returned\n"
            "        ctx.save_for_backward(W)\n"
            "\n"
            "    @staticmethod\n"
            "    def backward(ctx, dP):\n"
            "        (W,) = ctx.saved_tensors\n"
            "        with torch.enable_grad():      # recompute out of place, differentiate\n"
            "            W = W.detach().requires_grad_()\n"
            "            products = [W[0]]\n"
            "            for i in range(1, W.shape[0]):\n"
            "                products.append(products[-1] @ W[i])\n"
            "            (dW,) = torch.autograd.grad(torch.stack(products), W, dP)\n"
            "        return dW, None                 # no gradient for the buffer P\n"
            "\n"
            "W = torch.randn(4, 3, 3, dtype=torch.float64, requires_grad=True)\n"
            "P = PrefixProductsOut.apply(W, torch.empty_like(W))\n"
            "P.sum().backward()\n"
            "print('backward ran; P.grad_fn is', type(P.grad_fn).__name__)\n"
            "print('gradcheck:', torch.autograd.gradcheck(\n"
            "    lambda w: PrefixProductsOut.apply(w, torch.empty_like(w)), (W,)))",
        ),
    ),
    Topic(
        "views",
        "views, shared storage, rebinding versus writing, and P is W",
        "Indexing and slicing (P[i], P[:, 0], .T, .view) return views: new tensor objects over "
        "the same storage, so a write through a view lands in the base and bumps the shared "
        "version counter. Writing into memory (P[i] = ..., P.copy_(...), P[...] = ...) is "
        "what a caller-provided output needs; rebinding the name (P = P @ W) makes a new "
        "tensor and leaves the caller's buffer untouched. When P is W, slot i of W is "
        "destroyed by writing P[i]: read W[i] before that write, and never let a kernel write "
        "into one of its own operands (compute into a temporary, then assign).",
        (
            "P = torch.zeros(3, 2, 2)\n"
            "row = P[1]\n"
            "print('view of P?', row._base is P)\n"
            "row += 1                             # writes into P's memory\n"
            "print('P[1] is now', P[1].tolist())",
            "def rebinds(P):\n"
            "    P = torch.ones_like(P)             # a new tensor; the caller never sees it\n"
            "    return P\n"
            "\n"
            "def writes(P):\n"
            "    P[...] = 1.0                       # into the caller's memory\n"
            "    return P\n"
            "\n"
            "Q = torch.zeros(2)\n"
            "rebinds(Q)\n"
            "print('after rebinds:', Q.tolist())\n"
            "writes(Q)\n"
            "print('after writes: ', Q.tolist())",
        ),
    ),
    Topic(
        "detached-graph",
        "how a result gets cut off from W's graph (no_grad, .data, detach, numpy)",
        "Autograd only sees torch operations on tensors that require grad, outside "
        "torch.no_grad(). A result computed under no_grad, through .data or .detach(), or by "
        "a round trip through numpy has no grad_fn: backward then fails with 'element 0 of "
        "tensors does not require grad and does not have a grad_fn', or, worse, runs and "
        "silently misses the part of the computation it could not see. Keep the forward in "
        "torch operations on W itself.",
        (
            "W = torch.randn(3, 2, 2, requires_grad=True)\n"
            "with torch.no_grad():\n"
            "    P = W[0] @ W[1]\n"
            "print('requires grad?', P.requires_grad, '| grad_fn:', P.grad_fn)\n"
            "try:\n"
            "    P.sum().backward()\n"
            "except RuntimeError as error:\n"
            "    print(error)\n"
            "Q = torch.from_numpy(W.detach().numpy() * 2)   # a numpy round trip\n"
            "print('after numpy, requires grad?', Q.requires_grad)",
        ),
    ),
    Topic(
        "backward-derivation",
        "the matmul backward rule and why dW[j] sums over every later prefix",
        "For Y = A @ B and G = dL/dY: dL/dA = G @ B^T and dL/dB = A^T @ G (check the shapes: "
        "each gradient has its variable's shape). The prefix products are a chain of such "
        "steps, P[i] = P[i-1] @ W[i], and W[j] is a factor of every P[i] with i >= j, so the "
        "chain rule sums over all of them: dW[j] = sum over i >= j of (W[0] ... W[j-1])^T "
        "dP[i] (W[j+1] ... W[i])^T. Evaluated term by term that is O(N^2 D^3); a running "
        "adjoint (the gradient flowing into P[i] from every later prefix), swept from N-1 down "
        "to 0, reuses each step's work for O(N D^3), the cost of the forward.",
        (
            "A = torch.randn(2, 3, dtype=torch.float64, requires_grad=True)\n"
            "B = torch.randn(3, 4, dtype=torch.float64, requires_grad=True)\n"
            "G = torch.randn(2, 4, dtype=torch.float64)\n"
            "(A @ B).backward(G)\n"
            "print('dA == G @ B^T:', torch.allclose(A.grad, G @ B.T))\n"
            "print('dB == A^T @ G:', torch.allclose(B.grad, A.T @ G))",
            "W = torch.randn(5, 2, 2, dtype=torch.float64, requires_grad=True)\n"
            "products = [W[0]]\n"
            "for i in range(1, 5):\n"
            "    products.append(products[-1] @ W[i])\n"
            "dP = torch.zeros(5, 2, 2, dtype=torch.float64)\n"
            "dP[2] = 1.0                   # a loss that looks at P[2] only\n"
            "torch.stack(products).backward(dP)\n"
            "print('|dW[j]| for j = 0..4:', [round(g.norm().item(), 3) for g in W.grad])\n"
            "print('only W[0..2] are factors of P[2], so only they get gradient')",
        ),
    ),
    Topic(
        "gradcheck",
        "checking a backward against finite differences (and why float64)",
        "A central difference (f(x + eps) - f(x - eps)) / (2 eps) estimates a derivative with "
        "O(eps^2) error, plus rounding error of about machine-epsilon / eps: with eps = 1e-6 "
        "that is fine in float64 and useless in float32. torch.autograd.gradcheck(fn, inputs) "
        "builds the whole Jacobian both ways (fast_mode=True checks a random projection, for "
        "larger inputs) and raises GradcheckError, 'Jacobian mismatch for output 0 with "
        "respect to input 0', with both matrices. It perturbs the inputs in place, so a "
        "function that mutates its inputs corrupts the estimate: check that first. Use tiny "
        "float64 inputs.",
        (
            "class Square(torch.autograd.Function):\n"
            "    @staticmethod\n"
            "    def forward(x):\n"
            "        return x * x\n"
            "\n"
            "    @staticmethod\n"
            "    def setup_context(ctx, inputs, output):\n"
            "        ctx.save_for_backward(inputs[0])\n"
            "\n"
            "    @staticmethod\n"
            "    def backward(ctx, g):\n"
            "        (x,) = ctx.saved_tensors\n"
            "        return g * x                  # wrong: d(x^2)/dx = 2x\n"
            "\n"
            "x = torch.randn(3, dtype=torch.float64, requires_grad=True)\n"
            "try:\n"
            "    torch.autograd.gradcheck(Square.apply, (x,))\n"
            "except RuntimeError as error:         # a GradcheckError\n"
            "    print(type(error).__name__ + ':', str(error).splitlines()[0])",
            "for dtype in (torch.float32, torch.float64):\n"
            "    x, eps = torch.tensor(1.0, dtype=dtype), 1e-6\n"
            "    estimate = ((x + eps) ** 3 - (x - eps) ** 3) / (2 * eps)\n"
            "    print(f'{dtype}: d(x^3)/dx at 1 ~ {estimate.item():.6f} (true 3)')",
        ),
    ),
    Topic(
        "hillis-steele",
        "the parallel inclusive scan under matmul, forward and backward",
        "Matmul is associative, so the prefix products can be combined as a tree. Level by "
        "level with offsets 1, 2, 4, ... while the offset is below N: new[i] = old[i - s] @ "
        "old[i] for i >= s, and new[i] = old[i] below s. After the level with offset s, slot i "
        "holds the product of the last 2s factors ending at i, so ceil(log2 N) levels finish "
        "it. Every level reads only the previous level's snapshot, and the lower index is "
        "always the left factor (matmul is not commutative). The backward walks the cached "
        "levels in reverse: for new[i] = A @ B with G = dL/dnew[i], A gets G @ B^T and B gets "
        "A^T @ G; slots below s pass their gradient through.",
        (
            "N = 6\n"
            "slots = [(i, i) for i in range(N)]     # slot i holds W[lo] @ ... @ W[hi]\n"
            "step = 1\n"
            "while step < N:\n"
            "    old = list(slots)                  # read only the previous level\n"
            "    for i in range(step, N):\n"
            "        slots[i] = (old[i - step][0], old[i][1])   # lower index on the left\n"
            "    print(f'step {step}: ' + '  '.join(f'W{lo}..W{hi}' for lo, hi in slots))\n"
            "    step *= 2",
        ),
    ),
    Topic(
        "work-depth",
        "work and depth of the scan against the loop, and when the scan wins on a GPU",
        "Work is the total number of operations; depth (span) is the longest chain of "
        "operations that must wait for each other. The loop does N - 1 matmuls in N - 1 "
        "dependent steps. Hillis-Steele does N - s matmuls at offset s, about N log2 N in all "
        "(O(N D^3 log N)), in ceil(log2 N) levels of independent matmuls. It wins when the "
        "loop is latency-bound: many small matrices, where one D x D matmul cannot fill the "
        "GPU and every step pays a kernel launch; it loses when D is large enough for one "
        "matmul to saturate the device, and it holds O(N D^2 log N) memory if every level is "
        "cached. Blelloch's scan is work-efficient: O(N) work in 2 log2 N levels. To time it "
        "on a GPU, synchronise before reading the clock (CUDA events or "
        "torch.utils.benchmark), warm up, and report the median of many runs; without a GPU, "
        "say so: a skipped measurement is not a result.",
        (
            "for N in (8, 64, 1024):\n"
            "    step, levels, work = 1, 0, 0\n"
            "    while step < N:\n"
            "        work, levels, step = work + N - step, levels + 1, step * 2\n"
            "    print(f'N={N}: scan {work} matmuls in {levels} levels; '\n"
            "          f'loop {N - 1} matmuls in {N - 1} steps')",
        ),
    ),
    Topic(
        "associativity",
        "why the scan is allowed (associative) and why order matters (not commutative)",
        "(A @ B) @ C equals A @ (B @ C), so a product may be bracketed any way: that is what "
        "lets the scan combine partial products in a tree. A @ B differs from B @ A, so the "
        "order of the factors is fixed: in every combination the factor with the lower "
        "index stays on the left, P[i] = P[i-1] @ W[i], new[i] = old[i - s] @ old[i].",
        (
            "A, B, C = torch.randn(3, 2, 2, dtype=torch.float64)\n"
            "print('(A @ B) @ C == A @ (B @ C):', torch.allclose((A @ B) @ C, A @ (B @ C)))\n"
            "print('A @ B == B @ A:', torch.allclose(A @ B, B @ A))",
        ),
    ),
)

TOPIC_NAMES: tuple[str, ...] = tuple(t.name for t in TOPICS)


def get_topic(name: str) -> Topic:
    for topic in TOPICS:
        if topic.name == name:
            return topic
    raise KeyError(f"unknown topic {name!r}; topics: {', '.join(TOPIC_NAMES)}")


def run_demos(topic: Topic) -> list[tuple[str, str]]:
    """Run a topic's snippets in order, in one namespace; (code, what it printed) each.

    An unexpected exception is shown as output rather than raised: a demonstration that
    breaks on some torch version should say so, not take the command down.
    """
    import torch

    torch.manual_seed(0)
    namespace: dict[str, object] = {"torch": torch}
    shown = []
    for code in topic.demos:
        out = io.StringIO()
        with contextlib.redirect_stdout(out), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                exec(compile(code, f"<grader explain {topic.name}>", "exec"), namespace)
            except Exception as exc:  # noqa: BLE001 - shown, see the docstring
                print("".join(traceback.format_exception_only(exc)).strip())
        shown.append((code, out.getvalue()))
    return shown
