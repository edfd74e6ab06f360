"""Loading a round's reference implementations in the judge, under names that cannot clash.

reference/<round>/<flavor>/ is a drop-in set of exercise files whose parts import each other
relatively, so it is loaded as a package `grader_reference_<round>_<flavor>` from its folder.
"""

from __future__ import annotations

import importlib
import importlib.util
import re
import sys
from types import ModuleType

from grader.engine.rounds import Part, Round


def package_name(round_: Round, flavor: str) -> str:
    safe = re.sub(r"\W", "_", round_.id)
    return f"grader_reference_{safe}_{flavor}"


def load_reference_part(round_: Round, part: Part, flavor: str) -> ModuleType:
    """Import one reference part module (and, through it, the parts it builds on)."""
    package = package_name(round_, flavor)
    if package not in sys.modules:
        folder = round_.reference_dir(flavor)
        spec = importlib.util.spec_from_file_location(
            package, folder / "__init__.py", submodule_search_locations=[str(folder)]
        )
        if spec is None or spec.loader is None:
            raise ImportError(f"cannot load the references from {folder}")
        module = importlib.util.module_from_spec(spec)
        sys.modules[package] = module
        spec.loader.exec_module(module)
    return importlib.import_module(f"{package}.{part.module}")
