#!/usr/bin/env bash
# The project's GPU checks in one run, for a machine with CUDA (for instance the device machine
# of a task that has one): tests/test_gpu.py when pytest is there; part4.timing graded on CUDA
# for the reference scan (must pass) and for a scan with a Python loop over i in every level
# (must not pass); then bench.py's figures with the CUDA rows. Results go to $OUT (or a temporary folder) as JSON and markdown. The
# checks run with the default timeout, as a candidate's would: CUDA set-up, the address-space
# cap lifted for the device probe and the timing budget are all exercised.
#
#     bash benchmarks/gpu_check.sh
set -euo pipefail
cd "$(dirname "$0")/.."
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
python=${PYTHON:-python3}
out="${OUT:-$(mktemp -d)}"
"$python" -c "import torch; assert torch.cuda.is_available(), 'no CUDA device here'; \
print('torch', torch.__version__, 'on', torch.cuda.get_device_name())"

workspace() {  # $1: folder; the reference solutions, part 4 optionally replaced by $2
  "$python" -m grader init "$1" >/dev/null
  cp reference/prefix-products/torch/part*.py "$1/exercises/"
  if [ -n "${2:-}" ]; then cp "$2" "$1/exercises/part4_scan.py"; fi
}
timing() {  # $1: workspace, $2: label
  "$python" -m grader check part2 part4 --device cuda --seed 1 --workspace "$1" --json \
    > "$out/part4_$2.json" || true
  "$python" - "$out/part4_$2.json" "$2" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
(check,) = [c for p in doc["parts"] for c in p["checks"] if c["id"] == "part4.timing"]
print(f"--- {sys.argv[2]}: part4.timing {check['status']}\n{check['message']}")
PY
}

if "$python" -c "import pytest" 2>/dev/null; then
  "$python" -m pytest -q -rs -p no:cacheprovider tests/test_gpu.py 2>&1 | tee "$out/test_gpu.txt" || true
else
  echo "pytest is not installed here: tests/test_gpu.py not run"
fi
tmp=$(mktemp -d)
workspace "$tmp/reference"
timing "$tmp/reference" reference
workspace "$tmp/slow" tests/solutions/prefix-products/part4_python_loop_scan/part4_scan.py
timing "$tmp/slow" python_loop_scan
"$python" benchmarks/bench.py --skip-cli | tee "$out/bench.md"
