#!/usr/bin/env bash
# Gradescope runs this once, as root, while it builds the autograder image. It installs a
# Python >= 3.11 (uv downloads one when the image's is older), CPU-only torch and the grader
# shipped in the zip as grader-src/, into /autograder/grader-venv, where run_autograder looks.
# It ends with `grader selfcheck` and `grader sandbox`, so a broken image, or one where bubblewrap
# cannot make a sandbox, fails here, at build time, and not on a candidate's submission.
set -euo pipefail

ROOT="${GRADER_AUTOGRADER_ROOT:-/autograder}"
SOURCE="${GRADER_SOURCE_DIR:-$ROOT/source}"
VENV="$ROOT/grader-venv"
export DEBIAN_FRONTEND=noninteractive

apt-get update
apt-get install -y --no-install-recommends ca-certificates curl bubblewrap
curl -LsSf https://astral.sh/uv/install.sh | env UV_INSTALL_DIR="$ROOT/uv" UV_NO_MODIFY_PATH=1 sh
UV="$ROOT/uv/uv"

"$UV" venv --python 3.11 "$VENV"
# The CPU wheel index first: the default torch wheel drags in gigabytes of CUDA libraries.
"$UV" pip install --python "$VENV/bin/python" \
  --extra-index-url https://download.pytorch.org/whl/cpu torch
"$UV" pip install --python "$VENV/bin/python" "$SOURCE/grader-src"

"$VENV/bin/python" -m grader selfcheck --jobs 1
# Every submission is graded in a sandbox; an image that cannot make one fails here.
"$VENV/bin/python" -m grader sandbox
