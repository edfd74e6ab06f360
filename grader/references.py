"""Loading the reference implementations shipped with grader, under names that cannot clash.

reference/<flavor>/ is a drop-in set of exercise files whose parts import each other relatively,
so it is loaded as a package called `grader_reference_<flavor>` straight from its folder.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

from grader.parts import PARTS, Part
from grader.workspace import bundled_path


def reference_dir(flavor: str) -> Path:
    return bundled_path("reference") / flavor


def reference_file(part: Part, flavor: str) -> Path:
    return reference_dir(flavor) / part.file


def load_reference_part(part: Part, flavor: str) -> ModuleType:
    """Import one reference part module (and, through it, the parts it builds on)."""
    package = f"grader_reference_{flavor}"
    if package not in sys.modules:
        folder = reference_dir(flavor)
        spec = importlib.util.spec_from_file_location(
            package, folder / "__init__.py", submodule_search_locations=[str(folder)]
        )
        if spec is None or spec.loader is None:
            raise ImportError(f"cannot load the references from {folder}")
        module = importlib.util.module_from_spec(spec)
        sys.modules[package] = module
        spec.loader.exec_module(module)
    return importlib.import_module(f"{package}.{part.module}")


def load_reference(flavor: str) -> dict[str, object]:
    """Every reference function of a flavor, by name."""
    functions: dict[str, object] = {}
    for part in PARTS:
        module = load_reference_part(part, flavor)
        functions.update({name: getattr(module, name) for name in part.functions})
    return functions
