#!/usr/bin/env bash
# Build the zip to upload to Gradescope ("Zip file upload" autograder):
#   docs/gradescope/make_zip.sh [GRADER_TOML] [OUT_ZIP]
# It holds setup.sh and run_autograder at the root (where Gradescope looks for them), the
# instructor's grader.toml (default: the repo's) and this checkout's grader as grader-src/.
set -euo pipefail

HERE="$(cd "$(dirname "$0")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"
CONFIG="${1:-$REPO/grader.toml}"
OUT="${2:-$PWD/autograder.zip}"

python3 - "$REPO" "$HERE" "$CONFIG" "$OUT" <<'PY'
import sys
import zipfile
from pathlib import Path

repo, here, config, out = (Path(a) for a in sys.argv[1:])


def add(archive: zipfile.ZipFile, path: Path, name: str, mode: int = 0o644) -> None:
    info = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))
    info.external_attr = mode << 16
    info.compress_type = zipfile.ZIP_DEFLATED
    archive.writestr(info, path.read_bytes())


with zipfile.ZipFile(out, "w") as archive:
    add(archive, here / "setup.sh", "setup.sh", 0o755)
    add(archive, here / "run_autograder", "run_autograder", 0o755)
    add(archive, config, "grader.toml")
    for name in ("pyproject.toml", "README.md"):
        add(archive, repo / name, f"grader-src/{name}")
    for folder in ("grader", "reference"):
        for path in sorted((repo / folder).rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                add(archive, path, f"grader-src/{path.relative_to(repo).as_posix()}")
print(f"wrote {out}")
PY
