"""When a measurement taken in rounds (checks.base.Measured) has settled on a verdict.

A busy machine charges a process more than its work, by chance and not alike across processes;
each round adds samples, and an estimate built from all of them moves less and less. The
verdict is known once the estimate has stayed on one side of its limit as the last rounds came
in: DECIDING_ROUNDS of them on a machine whose samples agree, NOISY_ROUNDS where the same
quantity's samples spread by more than QUIET_SPREAD (a busy machine), and there a failure must
clear the limit by that spread too. Until then the check is undecided, and the runner measures
another round.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

DECIDING_ROUNDS = 2
"""How many estimates in a row, one after each round, must fall on the same side."""
NOISY_ROUNDS = 3
"""As many, when the samples spread like a busy machine's."""
QUIET_SPREAD = 1.25
"""How much more than another a sample of the same quantity may be on a machine that counts
as quiet."""
CLEAR_MARGIN = 1.5
"""How far within its limit a first estimate of a quantity measured in CPU time must be to
settle it at once, as within (settled's `clear`). A machine's load adds CPU time to a process
by a fraction (its cache and scheduler noise), never by the 2.25 times it would take to bring
an order of growth that fails (3 or more times the reference's, against a limit of 2) this far
within; honest code (0.8 to 1.3 times the reference's) then costs one round, not two."""


def settled(estimates: Sequence[float | None], limit: float, noisy: bool,
            clear: bool = False) -> bool | None:
    """Whether the quantity is over `limit` (True), within it (False), or not known yet (None),
    from its estimate after each round so far (None where a round's could not be made). On a
    busy machine "over" takes more: every recent estimate past the limit by the spread a quiet
    machine allows (QUIET_SPREAD), since a busy machine charges the longer runs more and so
    inflates the very growth being judged; an estimate between the two decides nothing.
    `clear` (a quantity of CPU time, see CLEAR_MARGIN): a first estimate within the limit by
    CLEAR_MARGIN is within at once."""
    if clear and len(estimates) == 1 and estimates[0] is not None \
            and estimates[0] <= limit / CLEAR_MARGIN:
        return False
    needed = NOISY_ROUNDS if noisy else DECIDING_ROUNDS
    recent = estimates[-needed:]
    if len(recent) < needed or any(e is None for e in recent):
        return None
    over = limit * QUIET_SPREAD if noisy else limit
    if all(e is not None and e > over for e in recent):
        return True
    if all(e is not None and e <= limit for e in recent):
        return False
    return None


def spread_out(samples: Iterable[Sequence[float]]) -> bool:
    """Whether any quantity's samples (one sequence per quantity) differ by more than
    QUIET_SPREAD times."""
    return any(min(s) > 0 and max(s) > QUIET_SPREAD * min(s) for s in samples if s)
