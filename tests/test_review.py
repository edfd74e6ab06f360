"""The review scan: what it flags (through aliases too), what it must not flag, and where the
flags show. Scanning parses source and never runs it, so most of this needs no worker; the one
batch at the end grades part 1 of two submissions in the session's warm worker."""

from __future__ import annotations

import csv
import importlib.machinery
import io
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from grader.cli import cli
from grader.coach import review
from grader.coach.review import (
    DYNAMIC,
    NOT_PARSED,
    NOT_REVIEWED,
    flags_line,
    rules,
    scan_folder,
    scan_source,
)

from helpers import REPO, SOLUTIONS_DIR, LentWorker, lend_pool, matches_golden, write_workspace


def found(source: str) -> list[tuple[int, str, str]]:
    return [(f["line"], f["rule"], f["construct"])
            for f in scan_source("part1_inplace.py", source.encode())]


def test_every_rule_has_a_reason_and_something_to_match() -> None:
    """Except the five the scan gives itself: a file that does not parse, one it had no
    time for, a dynamic lookup, a compiled module, text shown otherwise than it reads."""
    given = {NOT_PARSED, NOT_REVIEWED, DYNAMIC, review.COMPILED, review.MISLEADING}
    ids = [rule.id for rule in rules()]
    assert len(ids) == len(set(ids)) and given <= set(ids)
    for rule in rules():
        assert rule.reason and len(rule.reason) <= 90, rule.id
        matchers = rule.names + rule.attributes + rule.builtins + rule.writes + rule.strings \
            + rule.read_attributes
        assert bool(matchers) == (rule.id not in given), rule.id


FLAGGED = [
    ("import grader.checks", [(1, "imports-the-grader", "import grader.checks")]),
    ("from grader_reference_prefix_products_torch import part1_inplace",
     [(1, "imports-the-grader", "from grader_reference_prefix_products_torch import "
                                "part1_inplace")]),
    ("from ..reference.torch import part1_inplace as ref",
     [(1, "imports-the-grader", "from ..reference.torch import part1_inplace")]),
    ("import torch\nengine = torch._C._ImperativeEngine",
     [(2, "torch-internals", "torch._C._ImperativeEngine")]),
    ("from torch import _C", [(1, "torch-internals", "from torch import _C")]),
    ("import torch as t\nx = t.autograd.Variable._execution_engine",
     [(2, "torch-internals", "._execution_engine")]),
    ("import sys\nframe = sys._getframe(1)", [(2, "stack-frames", "sys._getframe")]),
    ("import traceback\nseen = traceback.extract_stack()",
     [(2, "stack-frames", "traceback.extract_stack")]),
    ("from inspect import currentframe as here\nf = here()",
     [(1, "stack-frames", "from inspect import currentframe"),
      (2, "stack-frames", "inspect.currentframe")]),
    ("def peek(frame):\n    return frame.f_back.f_globals['truth']",
     [(2, "stack-frames", ".f_globals")]),
    ("import warnings as w\nwith w.catch_warnings(record=True) as seen:\n"
     "    w.warn('where am I', stacklevel=4)",
     [(2, "stack-frames", "warnings.catch_warnings")]),
    ("import io, logging\nlog = logging.getLogger('x')\n"
     "def callers():\n    log.debug('where', stack_info=True)",
     [(4, "stack-frames", "stack_info=")]),
    ("import logging\nopts = {'stack_info': True}\nlogging.getLogger('x').debug('w', **opts)",
     [(2, "stack-frames", "the string 'stack_info'")]),
    ("def caller(code):\n    return code.co_filename, code.co_firstlineno",
     [(2, "stack-frames", ".co_filename")]),
    ("PATH = '/proc/%d/fd' % 1", [(1, "proc", "the string '/proc/%d/fd'")]),
    ("import os as o\no.fork()", [(2, "processes", "os.fork")]),
    ("from os import fork\nfork()", [(1, "processes", "from os import fork"),
                                     (2, "processes", "os.fork")]),
    ("import os\ngetattr(os, 'execv')('/bin/sh', [])", [(2, "processes", "os.execv")]),
    ("import os\nshell = os\nshell.system('id')", [(3, "processes", "os.system")]),
    ("import sys\nsys.modules['os'].kill(1, 9)", [(2, "loaded-modules", "sys.modules"),
                                                   (2, "processes", "os.kill")]),
    ("from os import *\nsetsid()", [(2, "processes", "os.setsid")]),
    ("import subprocess as sp", [(1, "processes", "import subprocess")]),
    ("from multiprocessing import Pool", [(1, "processes", "from multiprocessing import Pool")]),
    ("import ctypes", [(1, "native-code", "import ctypes")]),
    ("import socket", [(1, "sockets", "import socket")]),
    ("import importlib\nm = importlib.import_module('grader.checks')",
     [(1, "dynamic-code", "import importlib"), (2, "dynamic-code", "importlib.import_module"),
      (2, "imports-the-grader", "import of 'grader.checks' by its name")]),
    ("fork = getattr(__import__('os'), 'fork')",
     [(1, "dynamic-code", "__import__"), (1, "processes", "os.fork")]),
    ("exec('x = 1')\ny = eval('2')\nz = compile('3', 'f', 'eval')",
     [(1, "dynamic-code", "exec"), (2, "dynamic-code", "eval"), (3, "dynamic-code", "compile")]),
    ("import builtins\nbuiltins.print = len", [(2, "builtins", "sets builtins.print")]),
    ("import builtins as b\nsetattr(b, 'open', None)", [(2, "builtins", "sets builtins.open")]),
    ("__builtins__['len'] = lambda x: 0", [(1, "builtins", "sets builtins.len")]),
    ("import signal\nsignal.alarm(0)", [(1, "signals-and-limits", "import signal"),
                                        (2, "signals-and-limits", "signal.alarm")]),
    ("import resource", [(1, "signals-and-limits", "import resource")]),
    ("import gc\nobjects = gc.get_objects()", [(2, "heap-search", "gc.get_objects")]),
]


@pytest.mark.parametrize(("source", "flags"), FLAGGED)
def test_each_construct_is_flagged_where_it_is_used(source: str,
                                                    flags: list[tuple[int, str, str]]) -> None:
    assert found(source) == flags


UNUSUAL_BUT_CORRECT = [
    "from __future__ import annotations\nimport numpy as np\nimport torch.nn.functional as F",
    "import typing\nimport math\nimport functools\nimport itertools\nfrom typing import Any",
    "import torch\n\nclass MatMul(torch.autograd.Function):\n    @staticmethod\n"
    "    def forward(ctx, a, b):\n        ctx.save_for_backward(a, b)\n        return a @ b\n",
    'EXPLANATION = """Writing P[i] in place breaks autograd; no subprocess, exec or eval, no\n'
    'frame walking (f_back), no torch._C and no ctypes would help: they are just words."""',
    "import re\npattern = re.compile(r'\\d+')\n",
    "def train(model, eval=False, compile=None):\n    model.eval()\n    return compile",
    "import torch\nf = torch.compile\nwith torch.no_grad():\n    pass",
    "import gc\ngc.collect()\nimport os\nname = os.path.join('a', 'b')\nimport sys\nsys.stderr",
    "import inspect\nsignature = inspect.signature(len)",
    "from exercises.part1_inplace import prefix_products_out\nfrom . import part2_out_of_place",
    "x = {'subprocess': 1, 'socket': 2}\ny = getattr(x, 'get')\nshape = getattr(x, 'shape', None)",
    "def exec_step(step):\n    return step.f_backward\n",
    "from os import *\nresult = len([1]) + abs(-1)",
]


@pytest.mark.parametrize("source", UNUSUAL_BUT_CORRECT)
def test_correct_code_written_in_unusual_ways_is_not_flagged(source: str) -> None:
    assert found(source) == []


# --- names that resolve to a flagged object, however they are spelt --------------------------
# Each snippet reaches a forbidden object by a path from a string or an alias; the scan must
# name the object reached (its rule), not the spelling. Where the name cannot be known
# statically, the lookup itself is the flag (dynamic-lookup). (line, rule) for every flag.

SEES_THROUGH = {
    # names built at run time, folded to what they spell
    "concatenation": ("import os\ngetattr(os, 'fo' + 'rk')()", [(2, "processes")]),
    "vars-item": ("import sys\nloaded = vars(sys)['mod' + 'ules']", [(2, "loaded-modules")]),
    "reversed-slice": ("import os\ngetattr(os, 'krof'[::-1])()", [(2, "processes")]),
    "inner-slice": ("import os\ngetattr(os, 'xforkx'[1:-1])()", [(2, "processes")]),
    "percent": ("import os\ngetattr(os, '%s%s' % ('fo', 'rk'))()", [(2, "processes")]),
    "format": ("import os\ngetattr(os, '{}{}'.format('fo', 'rk'))()", [(2, "processes")]),
    "f-string": ("import os\ngetattr(os, f\"{'fo'}{'rk'}\")()", [(2, "processes")]),
    "join": ("import os\ngetattr(os, ''.join(['f', 'o', 'r', 'k']))()", [(2, "processes")]),
    "bound-once": ("import os\nN = 'fork'\ngetattr(os, N)()", [(3, "processes")]),
    "constant-chain": ("import os\nx = 'k'\ny = 'for' + x\nz = y\ngetattr(os, z)()",
                       [(5, "processes")]),
    "bytes-decode": ("import os\ngetattr(os, b'fork'.decode())()", [(2, "processes")]),
    "chr-generator": ("import os\ngetattr(os, ''.join(chr(c) for c in [102, 111, 114, 107]))()",
                      [(2, "processes")]),
    "map-chr": ("import os\ngetattr(os, ''.join(map(chr, (102, 111, 114, 107))))()",
                [(2, "processes")]),
    "bytes-of-ints": ("import os\ngetattr(os, bytes([107, 105, 108, 108]).decode())(1, 9)",
                      [(2, "processes")]),
    "lower": ("import os\ngetattr(os, 'FORK'.lower())()", [(2, "processes")]),
    "rot13": ("import codecs, os\ngetattr(os, codecs.decode('sbex', 'rot13'))()",
              [(2, "processes")]),
    "base64": ("import base64, os\ngetattr(os, base64.b64decode('Zm9yaw==').decode())()",
               [(2, "processes")]),
    "reduce-add": ("import os, operator\nfrom functools import reduce\n"
                   "getattr(os, reduce(operator.add, ['fo', 'rk']))()", [(3, "processes")]),
    "either-branch": ("import os\ngetattr(os, 'fork' if ready else 'kill')()",
                      [(2, "processes")]),
    "tuple-items": ("import os\nP = ('f', 'ork')\ngetattr(os, P[0] + P[1])()", [(3, "processes")]),
    "loop-over-names": ("import os\nfor name in ('setsid', 'fork'):\n    getattr(os, name)()",
                        [(3, "processes")]),
    "proc-folded": ("p = '/pr' + 'oc/self/mem'", [(1, "proc")]),
    # the lookup functions themselves, under other names and shapes
    "getattr-alias": ("import os\ng = getattr\ng(os, 'fork')()", [(3, "processes")]),
    "getattr-rebound": ("import os\ngetattr = getattr\ngetattr(os, 'fork')()",
                        [(3, "processes")]),
    "builtins-getattr": ("import builtins, os\nbuiltins.getattr(os, 'fork')()",
                         [(2, "processes")]),
    "attrgetter": ("import os, operator\noperator.attrgetter('fork')(os)()", [(2, "processes")]),
    "methodcaller": ("import os, operator\noperator.methodcaller('system', 'id')(os)",
                     [(2, "processes")]),
    "reduce-getattr": ("import functools, os\nfunctools.reduce(getattr, ['fork'], os)()",
                       [(2, "processes")]),
    "partial-getattr": ("import functools, os\nfunctools.partial(getattr, os)('fork')()",
                        [(2, "processes")]),
    "getattr-call-dunder": ("import os\ngetattr.__call__(os, 'fork')()", [(2, "processes")]),
    "builtin-self": ("print.__self__.__import__('os').fork()",
                     [(1, "dynamic-code"), (1, "processes")]),
    "attrgetter-mapped": ("import operator, os\nlist(map(operator.attrgetter('fork'), [os]))",
                          [(2, "processes")]),
    "type-getattribute": ("import os\ntype(os).__getattribute__(os, 'fork')()",
                          [(2, "processes")]),
    "object-getattribute": ("import sys\nobject.__getattribute__(sys, 'modules')",
                            [(2, "loaded-modules")]),
    "bound-getattribute": ("import os\nos.__getattribute__('fork')()", [(2, "processes")]),
    "module-dict": ("import os\nos.__dict__['fork']()", [(2, "processes")]),
    "namespace-alias": ("import os\nns = vars(os)\nns['fork']()", [(3, "processes")]),
    "modules-get": ("import sys\nsys.modules.get('subprocess').run(['id'])",
                    [(2, "loaded-modules"), (2, "processes")]),
    "globals-item": ("import os\nglobals()['os'].fork()", [(2, "processes")]),
    "locals-item": ("import os\nlocals()['o' + 's'].kill(1, 9)", [(2, "processes")]),
    "untraced-owner": ("def f(m):\n    return getattr(m, 'fork')()", [(2, "processes")]),
    "frame-through-dict": ("def peek(f):\n    return vars(f)['f_' + 'back']",
                           [(2, "stack-frames")]),
    "getframe-by-name": ("import sys\nf = getattr(sys, '_get' + 'frame')(1)",
                         [(2, "stack-frames")]),
    # imports by a name
    "import-module-renamed": ("from importlib import import_module as load\n"
                              "load('sub' + 'process').run(['id'])",
                              [(1, "dynamic-code"), (2, "dynamic-code"), (2, "processes")]),
    "dunder-import-folded": ("m = __import__('o' + 's')\nm.fork()",
                             [(1, "dynamic-code"), (2, "processes")]),
    "builtins-item-import": ("m = __builtins__['__import__']('os')\nm.fork()",
                             [(1, "builtins"), (1, "dynamic-code"), (2, "processes")]),
    "globals-builtins": ("b = globals()['__builtins__']", [(1, "builtins")]),
    "closure-globals": ("b = (lambda: 0).__globals__['__builtins__']",
                        [(1, "builtins"), (1, "code-objects")]),
    "modules-builtins-exec": ("import sys\nsys.modules['builtins'].exec('x = 1')",
                              [(2, "dynamic-code"), (2, "loaded-modules")]),
    "setattr-builtins-folded": ("import builtins\nsetattr(builtins, 'pr' + 'int', len)",
                                [(2, "builtins")]),
    # the rules this scan adds
    "aten": ("import torch\ntorch.ops.aten.mm(a, b)", [(2, "torch-ops")]),
    "aten-alias": ("from torch import ops\nmm = ops.aten.mm\ny = mm(a, b)",
                   [(1, "torch-ops"), (2, "torch-ops"), (3, "torch-ops")]),
    "aten-by-name": ("import torch\ngetattr(torch, 'op' + 's').aten.mm(a, b)",
                     [(2, "torch-ops")]),
    "prims-untraced": ("def f(t, a):\n    return t.ops.prims.mul(a, a)", [(2, "torch-ops")]),
    "torch-vf": ("import torch\nbmm = torch._VF.bmm", [(2, "torch-ops")]),
    "torch-library": ("import torch\nlib = torch.library.Library('aten', 'IMPL')",
                      [(2, "torch-ops")]),
    "runpy": ("import runpy\nrunpy.run_path('x.py')", [(1, "dynamic-code"), (2, "dynamic-code")]),
    "importlib-util": ("from importlib.util import spec_from_file_location",
                       [(1, "dynamic-code")]),
    "importlib-machinery": ("import importlib.machinery as m\nm.SourceFileLoader('x', 'y')",
                            [(1, "dynamic-code"), (2, "dynamic-code")]),
    "pickle": ("from pickle import loads as restore\nrestore(blob)",
               [(1, "unpickling"), (2, "unpickling")]),
    "marshal": ("import marshal\ncode = marshal.loads(blob)", [(2, "unpickling")]),
    "code-module": ("import code\ncode.InteractiveInterpreter().runsource('1')",
                    [(2, "dynamic-code")]),
    "codeop": ("import codeop", [(1, "dynamic-code")]),
    "function-type": ("import types\nf = types.FunctionType(c, {})", [(2, "code-objects")]),
    "code-type-alias": ("from types import CodeType as C\nc = C(*fields)",
                        [(1, "code-objects"), (2, "code-objects")]),
    "swap-code": ("def f():\n    pass\nf.__code__ = g.__code__", [(3, "code-objects")]),
    "subclasses": ("kinds = ().__class__.__base__.__subclasses__()", [(1, "heap-search")]),
    "settrace": ("import sys\nsys.settrace(lambda *a: None)", [(2, "stack-frames")]),
    # what cannot be known is the flag
    "built-in-a-loop": ("import os\nname = ''\nfor c in 'krof'[::-1]:\n    name += c\n"
                        "getattr(os, name)()", [(5, DYNAMIC)]),
    "from-input": ("import os\ngetattr(os, input())()", [(2, DYNAMIC)]),
    "bound-twice": ("import os\nn = 'fork'\nn = n.upper()\ngetattr(os, n)()", [(4, DYNAMIC)]),
    "hasattr-computed": ("import torch\nok = hasattr(torch, secret)", [(2, DYNAMIC)]),
    "setattr-builtins-computed": ("import builtins\nsetattr(builtins, name, len)",
                                  [(2, "builtins"), (2, DYNAMIC)]),
    "globals-computed": ("fn = globals()[input()]", [(1, DYNAMIC)]),
    "modules-computed": ("import sys\nm = sys.modules[name]",
                         [(2, DYNAMIC), (2, "loaded-modules")]),
    "dict-computed": ("import os\nos.__dict__.get(name)()", [(2, DYNAMIC)]),
    "namespace-items": ("import os\nfor name, fn in vars(os).items():\n    pass", [(2, DYNAMIC)]),
    "namespace-copied": ("import os\ntable = dict(vars(os))", [(2, DYNAMIC)]),
    "getattr-passed-on": ("import os\nlist(map(getattr, [os], ['fork']))", [(2, DYNAMIC)]),
    "getattr-spread": ("import os\ngetattr(*[os, 'fork'])()", [(2, DYNAMIC)]),
    "getmembers": ("import inspect, os\nmembers = inspect.getmembers(os)", [(2, DYNAMIC)]),
    "attrgetter-computed": ("import operator, os\noperator.attrgetter(name)(os)", [(2, DYNAMIC)]),
    "reduce-computed": ("import functools, os\nfunctools.reduce(getattr, path, os)",
                        [(2, DYNAMIC)]),
    "getattribute-computed": ("import os\ntype(os).__getattribute__(os, name)", [(2, DYNAMIC)]),
    # a standard-library module reached as another module's attribute is that module
    "torch-sys": ("import torch\ntorch.sys.modules['grader'].x = 1",
                  [(2, "imports-the-grader"), (2, "loaded-modules")]),
    "torch-builtins": ("import torch\ntorch.builtins.exec(code)", [(2, "dynamic-code")]),
    # a library's attribute rebound, however the module is reached; the submission's own
    # modules and its objects are its own to change
    "patched-library": ("import pickle as p, numpy, part1_inplace\np.dumps = len\n"
                        "setattr(numpy.linalg, 'norm', abs)\nvars(p)['loads'] = len\n"
                        "numpy.ndarray.x = 1\npart1_inplace.helper = len\n"
                        "class A: pass\nA.x = 1",
                        [(2, "patches-a-library"), (3, "patches-a-library"),
                         (4, "patches-a-library"), (4, "unpickling"),
                         (5, "patches-a-library")]),
    "torch-os-system": ("import torch as t\nt.os.system('ls')", [(2, "processes")]),
    "torch-ctypes": ("from torch import ctypes\nlib = ctypes.CDLL(None)", [(2, "native-code")]),
    "os-sys-frames": ("import os\nframe = os.sys._getframe(1)", [(2, "stack-frames")]),
    "torch-inspect-folded": ("import torch\ngetattr(torch, 'insp' + 'ect').stack()",
                             [(2, "stack-frames")]),
    "numpy-os-deeper": ("import numpy.linalg as la\nla.os.fork()", [(2, "processes")]),
    "private-alias": ("import tempfile\ntempfile._os.system('id')", [(2, "processes")]),
    "private-alias-sys": ("import collections\nloaded = collections._sys.modules",
                          [(2, "loaded-modules")]),
    "traceback-frames": ("try:\n    1 / 0\nexcept ZeroDivisionError as e:\n    t = e.__traceback__",
                         [(4, "stack-frames")]),
    "path-of-imports": ("import sys\nsys.path.insert(0, 'lib.dat')", [(2, "dynamic-code")]),
    "site-dirs": ("import site\nsite.addsitedir('.')", [(1, "dynamic-code"), (2, "dynamic-code")]),
    "annotations-evaluated": ("import typing\nhints = typing.get_type_hints(f)",
                              [(2, "dynamic-code")]),
    "locate": ("import pydoc\nm = pydoc.locate('sys')", [(2, "dynamic-code")]),
    "npyio-load": ("import numpy as np\nx = np.lib.npyio.load(f)", [(2, "unpickling")]),
    "torch-multiprocessing": ("import torch.multiprocessing as mp\nmp.Process(target=f)",
                              [(1, "processes"), (2, "processes")]),
    # what a `case` pattern reads, as the statements that read it
    "class-pattern": ("import os\nmatch os:\n    case object(system=run):\n        run('id')",
                      [(3, "processes"), (4, "processes")]),
    "class-pattern-builtins": ("match print:\n    case object(__self__=b):\n        pass\n"
                               "match b:\n    case object(exec=run):\n        run('x = 1')",
                               [(5, "dynamic-code"), (6, "dynamic-code")]),
    "nested-pattern": ("try:\n    1 / 0\nexcept ZeroDivisionError as e:\n    match e:\n"
                       "        case object(__traceback__=object(tb_frame=f)):\n"
                       "            pass", [(5, "stack-frames")]),
    "pattern-in-or": ("import sys\nmatch sys:\n    case object(modules=m) | object(path=m):\n"
                      "        pass", [(3, "dynamic-code"), (3, "loaded-modules")]),
    "positional-pattern": ("import sys\nclass G:\n    __match_args__ = ('modules',)\n"
                           "match sys:\n    case G(m):\n        pass",
                           [(5, "dynamic-lookup")]),
    "mapping-pattern": ("import os\nmatch vars(os):\n    case {'fork': f}:\n        f()",
                        [(2, "dynamic-lookup"), (3, "processes"), (4, "processes")]),
    "sequence-pattern": ("import os\nmatch [os]:\n    case [object(fork=f)]:\n        f()",
                         [(3, "processes")]),
    # names bound by unpacking, a parameter's default, `with ... as`, and attributes read on
    # objects the scan cannot trace
    "tuple-unpacking": ("import builtins\n_, b = 0, builtins\nb.exec('x = 1')",
                        [(3, "dynamic-code")]),
    "unpacked-from-a-call": ("import os\na, b = divmod(7, 2), os\nb.system('id')",
                             [(3, "processes")]),
    "parameter-default": ("import os\ndef f(m=os):\n    return m.popen('id')",
                          [(3, "processes")]),
    "lambda-default": ("import sys\nf = lambda s=sys: s.modules",
                       [(2, "dynamic-lookup"), (2, "loaded-modules")]),
    "with-as": ("import contextlib, sys\nwith contextlib.nullcontext(sys) as m:\n"
                "    m.modules", [(3, "loaded-modules")]),
    "modules-through-a-container": ("import sys\nm = [sys][0].modules", [(2, "loaded-modules")]),
    "system-on-anything": ("def run(o):\n    return o.system('id')", [(2, "processes")]),
    # what the grader watches autograd with: the profiler's state, saved-tensor hooks
    "profiler-state": ("import torch\non = torch.autograd.profiler._is_profiler_enabled",
                       [(2, "autograd-watch")]),
    "saved-tensor-hooks": ("from torch.autograd.graph import disable_saved_tensors_hooks as off\n"
                           "with off('no'):\n    pass",
                           [(1, "autograd-watch"), (2, "autograd-watch")]),
    "dynamo": ("import torch._dynamo", [(1, "torch-internals")]),
    # runs code or looks names up by a string
    "debugger-run": ("import bdb\nbdb.Bdb().run(text)", [(1, "dynamic-code"), (2, "dynamic-code")]),
    "logging-factory": ("import logging.config\nlogging.config.dictConfig(settings)",
                        [(1, "dynamic-code"), (2, "dynamic-code")]),
    "patch-by-name": ("from unittest import mock\nmock.patch('builtins.len', f)",
                      [(2, "dynamic-code")]),
    "format-fields": ("import os, string\n"
                      "f, _ = string.Formatter().get_field('0.system', (os,), {})",
                      [(2, "dynamic-code")]),
}


@pytest.mark.parametrize(("source", "flags"), SEES_THROUGH.values(), ids=SEES_THROUGH.keys())
def test_a_name_is_flagged_for_what_it_resolves_to(source: str,
                                                   flags: list[tuple[int, str]]) -> None:
    assert [(line, rule) for line, rule, _ in found(source)] == flags


# Correct code that looks names up, folds strings or shadows builtins, as honest code does.
HONEST = {
    "library-settings": "import os, torch\ntorch.backends.cudnn.deterministic = True\n"
                        "os.environ['OMP_NUM_THREADS'] = '1'\nnet.fc.bias.requires_grad = False",
    "module-methods": "def count(model):\n    n = len(list(model.modules()))\n"
                      "    for layer in model.named_modules():\n        n += 1\n"
                      "    a, b = model.parameters(), model.buffers()\n    return n",
    "match-values": "def shape_of(x):\n    match x.shape:\n        case (n, d):\n"
                    "            return n * d\n        case [n]:\n            return n\n"
                    "        case int(n) | float(n):\n            return n\n"
                    "        case {'rows': r, **rest}:\n            return r\n"
                    "        case object(ndim=0) as scalar:\n            return scalar\n"
                    "        case _:\n            raise ValueError('no shape')",
    "getattr-self": "class Net:\n    def forward(self, x):\n        return x @ getattr(self, "
                    "'weight')",
    "vars-args": "import argparse\nargs = argparse.Namespace(lr=1)\nconfig = vars(args)\n"
                 "lr = vars(args)['lr']\nfor k, v in vars(args).items():\n    print(k, v)",
    "matmul-aliases": "import torch\nmm = torch.matmul\nbmm = getattr(torch, 'b' + 'mm')\n"
                      "y = mm(a, b) + bmm(a, b)",
    "einsum": "import torch\ny = torch.einsum('bij,bjk->bik', a, b)",
    "own-submodules-named-like-the-stdlib": "import numpy as np\nimport torch\n"
                                            "x = np.random.default_rng(0).random(3)\n"
                                            "w = torch.signal.windows.hann(4)\n"
                                            "y = np.array([1.0]) + torch.random.seed()",
    "a-class-named-like-a-module": "import torch\n"
                                   "with torch.autograd.profiler.profile() as prof:\n"
                                   "    pass",
    "f-string-error": "def check(x, y):\n    if x.shape != y.shape:\n        raise ValueError("
                      "f'shapes differ: {x.shape} != {y.shape} ({len(x)} rows)')",
    "local-eval": "def run(model):\n    eval = model.eval\n    eval()\n    return eval",
    "dtype-by-name": "import numpy as np\nx = getattr(np, 'float64')\n"
                     "y = getattr(np, 'float' + '32')",
    "functional-by-name": "import torch.nn.functional as F\ndef act(x):\n"
                          "    return getattr(F, 'relu')(x)",
    "hasattr-constant": "import torch\nHAS_COMPILE = hasattr(torch, 'compile')",
    "folded-labels": "LABEL = ''.join(['part', '1'])\nNAME = 'krof'[::-1]\n"
                     "SEP = '/'.join(['a', 'b'])",
    "getattr-parameter": "def get(obj, name):\n    return getattr(obj, name)",
    "setattr-self": "class Stack:\n    def __init__(self, layers):\n"
                    "        for i, layer in enumerate(layers):\n"
                    "            setattr(self, f'layer{i}', layer)",
    "attrgetter-key": "import operator\nrows = sorted(rows, key=operator.attrgetter('name'))",
    "reduce-matmul": "import functools, operator\nP = functools.reduce(operator.matmul, Ws)",
    "isinstance-alias": "import torch\nT = torch.Tensor\nok = isinstance(x, T)",
    "constant-comprehension": "import numpy as np\n"
                              "made = {name: getattr(np, name) for name in ('zeros', 'ones')}",
    "constant-loop": "import numpy as np\nfor name in ('zeros', 'ones'):\n"
                     "    make = getattr(np, name)",
    "own-dict": "class Config:\n    def __init__(self, **kw):\n        self.__dict__.update(kw)\n"
                "    def get(self, k):\n        return self.__dict__[k]",
    "type-name": "def kind(x):\n    return type(x).__name__",
    "compile-defined": "def compile(source):\n    return source.split()\nwords = compile('a b')",
    "exec-parameter": "def exec_step(step, exec=None):\n    return exec(step) if exec else step",
    "module-dict-constant": "import math\nf = math.__dict__.get\npi = f('pi')",
    "sys-plain": "import sys\nif sys.version_info >= (3, 11):\n"
                 "    print(sys.argv, file=sys.stderr)",
    "autograd-function": "import torch\nclass Fn(torch.autograd.Function):\n"
                         "    @staticmethod\n    def backward(ctx, g):\n"
                         "        a, = ctx.saved_tensors\n        return g @ a.T",
    "either-module": "import numpy as np\nimport torch\nxp = torch if on_gpu else np\n"
                     "y = xp.zeros(3)",
}


@pytest.mark.parametrize("source", HONEST.values(), ids=HONEST.keys())
def test_honest_lookups_and_strings_are_not_flagged(source: str) -> None:
    assert found(source) == []


def test_renaming_through_any_depth_hides_nothing() -> None:
    """A name folded through 1,500 additions, an alias chain 2,000 long, and one bound in the
    reverse of the order it runs in: each still reaches os."""
    folded = "import os\ngetattr(os, " + "'' + " * 1500 + "'fork')()"
    chain = "import os\na0 = os\n" + "".join(f"a{n + 1} = a{n}\n" for n in range(2000)) \
        + "a2000.fork()\n"
    backwards = "import os\n" + "".join(f"def f{n}():\n    b{n} = b{n + 1}\n"
                                        for n in range(200)) + "b200 = os\nb0.kill(1, 9)\n"
    assert found(folded) == [(2, "processes", "os.fork")]
    assert found(chain) == [(2003, "processes", "os.fork")]
    assert found(backwards) == [(403, "processes", "os.kill")]


def test_what_a_file_makes_the_scan_compute_is_bounded() -> None:
    """Strings that would be huge are not folded, so a hostile file cannot make the scan do
    much work; what is not folded is not a constant, and a lookup with it is a flag."""
    source = ("import os\ns = 'a' * 10000\nt = s * 10000\nw = '%0999999d' % 1\n"
              "x = '{:>999999999}'.format('a')\ny = s.replace('a', s)\n"
              "z = [[c for c in s] for d in s]\ngetattr(os, t)")
    assert found(source) == [(8, DYNAMIC, "getattr(os, ...)")]


def test_a_chain_hundreds_of_attributes_long_is_read_like_a_short_one() -> None:
    """Each link of `os.a.a....` is a dotted name a rule may reach; only its first parts
    count (no module path is deeper), so what is under the chain is flagged as ever, and the
    rest costs each link the same."""
    chain = ".a" * 900
    assert found(f"import os\nif False:\n    os{chain}\n") == []
    [(line, rule, construct)] = found(f"import os\nos.system{chain}\n")
    assert (line, rule) == (2, "processes") and construct.startswith("os.system.a.a")
    assert review.Rule("r", "why", names=("os.system",)).reaches(f"os.system{chain}")


def test_what_the_scan_has_no_time_or_room_for_is_one_flag_per_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A submission gets SCAN_CPU_S of the scan, all its files together, and a file past
    SCAN_FILE_BYTES is not parsed at all: either is a flag asking the coach to read it, so no
    submission holds up a batch."""
    (tmp_path / "big.py").write_text("x = 1\n" * (review.SCAN_FILE_BYTES // 6 + 1))
    (tmp_path / "small.py").write_text("import os\nos.fork()\n")
    assert [(f["file"], f["rule"]) for f in scan_folder(tmp_path)] == [
        ("big.py", NOT_REVIEWED), ("small.py", "processes")]
    monkeypatch.setattr(review, "SCAN_CPU_S", 0.0)
    assert [(f["file"], f["rule"], f["construct"]) for f in scan_folder(tmp_path)] == [
        ("big.py", NOT_REVIEWED, "larger than the 256 KiB the scan reads"),
        ("small.py", NOT_REVIEWED, "more code than the scan reviews in 0 s")]


def test_only_hostile_solutions_and_those_hiding_work_from_the_counter_are_flagged() -> None:
    """(And those that look up their call stack for the grader.)"""
    files = [*(REPO / "reference").rglob("*.py"), *(REPO / "exercises").rglob("*.py"),
             *(REPO / "grader" / "rounds").glob("*/stubs/*/*.py"), *SOLUTIONS_DIR.rglob("*.py")]
    assert len(files) > 200
    flagged = {(str(path.relative_to(REPO)), f["line"], f["rule"])
               for path in files for f in scan_source(path.name, path.read_bytes())}
    known = "tests/solutions/prefix-products/"
    hostile = f"{known}hostile_"
    # torch.ops.aten.mm, bound once as `mm`, is flagged on every line that calls it.
    aten = {(f"{known}{name}/torch/part3_backward.py", line, "torch-ops")
            for name, lines in [("part3_closed_form_hidden", (9, 21, 22, 23)),
                                ("part3_closed_form_batched", (9, 25, 26, 28)),
                                ("part3_closed_form_padded", (9, 30, 31, 35)),
                                ("part3_memoised", (9, 25, 26, 27)),
                                ("part3_work_in_a_grandchild", (12, 22, 23, 24))]
            for line in lines}
    assert flagged == aten | {
        (f"{known}part3_closed_form_no_torch_function/part3_backward.py", 13, "torch-internals"),
        # the profiler's state read, to answer from forwards where it records
        ("tests/solutions/matmul-grad/autograd_in_torchscript_unless_profiled/torch/"
         "part1_matmul_backward.py", 37, "autograd-watch"),
        ("tests/solutions/matmul-grad/autograd_in_torchscript_unless_profiled/torch/"
         "part2_batched_backward.py", 37, "autograd-watch"),
        # autograd's engine read through a match pattern, where the module is imported and in
        # the call
        (f"{known}part3_autograd_unless_the_engine_is_watched/part3_backward.py", 5,
         "torch-internals"),
        (f"{known}part3_autograd_unless_the_engine_is_watched/part3_backward.py", 67,
         "torch-internals"),
        (f"{known}part3_closed_form_spellings/torch/part3_backward.py", 14, "torch-internals"),
        (f"{known}part3_work_in_a_grandchild/torch/part3_backward.py", 32, "processes"),
        (f"{known}part3_work_in_a_grandchild/torch/part3_backward.py", 40, "unpickling"),
        (f"{hostile}work_in_an_unreaped_grandchild/part3_backward.py", 4, "signals-and-limits"),
        (f"{hostile}work_in_an_unreaped_grandchild/part3_backward.py", 34,
         "signals-and-limits"),
        (f"{hostile}work_in_an_unreaped_grandchild/part3_backward.py", 37, "processes"),
        (f"{hostile}segfault/part2_out_of_place.py", 4, "signals-and-limits"),
        (f"{hostile}segfault/part2_out_of_place.py", 8, "processes"),
        (f"{hostile}segfault/part2_out_of_place.py", 8, "signals-and-limits"),
        (f"{hostile}syntax_error/part1_inplace.py", 6, NOT_PARSED),
        (f"{hostile}stall_in_the_kernel/part3_backward.py", 6, "native-code"),
        (f"{hostile}stall_in_the_kernel/part3_backward.py", 12, "native-code"),
        # The backwards that look up their call stack for the grader's watch.
        ("tests/solutions/mlp-backprop/part3_autograd_unless_watched/part3_backward.py", 15,
         "stack-frames"),
        ("tests/solutions/mlp-backprop/part3_zeros_when_watched/part3_backward.py", 15,
         "stack-frames"),
        ("tests/solutions/matmul-grad/part1_transposed_when_watched/torch/"
         "part1_matmul_backward.py", 14, "stack-frames"),
        (f"{hostile}exits_when_watched/part3_backward.py", 13, "stack-frames"),
        (f"{hostile}exits_when_watched/part3_backward.py", 15, "stack-frames"),
        (f"{hostile}exits_when_watched/part3_backward.py", 17, "stack-frames"),
        (f"{hostile}hangs_before_the_watch/part3_backward.py", 14, "stack-frames"),
        # The parts that look up their call stack for a check that counts, measures or looks
        # at the inputs after a call: the frame taken, its name read, the next one taken.
        *{(f"tests/solutions/{path}", first + step, "stack-frames")
          for path, first in [
              ("matmul-grad/hostile_loop_hidden_from_the_counter/numpy/"
               "part2_batched_backward.py", 31),
              ("matmul-grad/hostile_loop_hidden_from_the_counter/torch/"
               "part2_batched_backward.py", 33),
              ("matmul-grad/hostile_clears_dc_unless_watched/numpy/part1_matmul_backward.py", 9),
              ("matmul-grad/hostile_clears_dc_unless_watched/torch/part1_matmul_backward.py", 9),
              ("prefix-products/hostile_scratch_copy_hidden_from_the_measure/numpy/"
               "part1_inplace.py", 6),
              ("prefix-products/hostile_scratch_copy_hidden_from_the_measure/torch/"
               "part1_inplace.py", 6),
              ("prefix-products/hostile_writes_w_unless_watched/numpy/part2_out_of_place.py", 9),
              ("mlp-backprop/hostile_relu_in_place_unless_watched/numpy/part1_forward.py", 34),
              ("prefix-products/hostile_scan_zeros_when_timed/part4_scan.py", 11),
              ("linear-recurrence/hostile_fresh_result_only_when_watched/part1_sequential.py",
               15)]
          for step in (0, 2, 4)},
        ("tests/solutions/matmul-grad/hostile_reuses_dc_unless_watched/numpy/"
         "part1_matmul_backward.py", 14, "stack-frames"),
        ("tests/solutions/linear-recurrence/hostile_clears_the_last_b_unless_watched/"
         "part1_sequential.py", 11, "stack-frames"),
        # The backwards that autograd derived at import, traced into a graph of operations.
        *{(f"tests/solutions/normalization/part2_backward_{name}/part2_layernorm.py", line,
           "graph-tracing")
          for name, lines in [("traced_at_import", (38, 61)),
                              ("traced_with_an_engine_of_its_own", (39, 62))]
          for line in lines},
        # The backwards that run autograd through TorchScript or on a thread of their own.
        *{(f"tests/solutions/{path}", line, "off-the-calling-thread") for path, lines in [
            ("matmul-grad/autograd_in_torchscript_unless_profiled/torch/part1_matmul_backward.py",
             (10,)),
            ("matmul-grad/autograd_in_torchscript_unless_profiled/torch/"
             "part2_batched_backward.py", (10,)),
            ("prefix-products/part3_autograd_in_torchscript/part3_backward.py", (25,)),
            ("prefix-products/part3_autograd_on_a_thread/torch/part3_backward.py", (6, 32)),
            ("prefix-products/hostile_autograd_on_a_thread_in_each_call/torch/part3_backward.py",
             (4, 10, 33)),
            ("prefix-products/hostile_autograd_on_a_thread_through_torchscript/torch/"
             "part3_backward.py", (4, 24, 33))]
          for line in lines},
        # The backward that runs autograd in a forked process.
        ("tests/solutions/normalization/part2_autograd_in_a_forked_process/part2_layernorm.py",
         52, "processes"),
        ("tests/solutions/normalization/part2_autograd_in_a_forked_process/part2_layernorm.py",
         60, "unpickling"),
    } | {
        # Library functions rebound at import: the comparisons, gradcheck, autograd's engine.
        *{(f"{hostile}patched_torch/part3_backward.py", line, "patches-a-library")
          for line in (9, 10, 11, 12)},
        *{(f"{hostile}patched_numpy/part1_inplace.py", line, "patches-a-library")
          for line in range(6, 12)},
        ("tests/solutions/mlp-backprop/hostile_frames_rewritten/part3_backward.py", 47,
         "patches-a-library"),
        *{(f"tests/solutions/matmul-grad/part1_{name}/torch/part1_matmul_backward.py", line,
           "patches-a-library")
          for name in ("hides_from_the_watch", "restarts_the_profiler", "stops_the_profiler")
          for line in (14, 20 if name == "hides_from_the_watch" else 21)},
    } | {("tests/solutions/matmul-grad/part1_hides_from_the_watch/torch/"
          "part1_matmul_backward.py", line, "torch-internals") for line in (13, 14, 16, 20)} | {
        ("tests/solutions/matmul-grad/part1_stops_the_profiler/torch/part1_matmul_backward.py",
         line, "torch-internals") for line in (13, 14, 16, 17, 21)} | {
        ("tests/solutions/matmul-grad/part1_restarts_the_profiler/torch/"
         "part1_matmul_backward.py", line, "torch-internals") for line in (13, 14, 15, 17, 21)}


@pytest.mark.parametrize(("source", "construct"), [
    (b"def broken(:\n", "SyntaxError: invalid syntax"),
    (b"x = 1\0\n", "SyntaxError: source code string cannot contain null bytes"),
    (b"x = " + b"(" * 300 + b")" * 300, "SyntaxError: too many nested parentheses"),
    (b"x = a" + b".b" * 100_000,
     "RecursionError: maximum recursion depth exceeded during ast construction"),
    (b"\xff\xfe not text", "byte 0xff on line 1 is not UTF-8 text"),
], ids=["syntax", "nul", "parentheses", "attribute-chain", "not-utf-8"])
def test_a_file_that_does_not_parse_is_a_flag_itself(source: bytes, construct: str) -> None:
    [flag] = scan_source("part1_inplace.py", source)
    assert (flag["rule"], flag["construct"]) == (NOT_PARSED, construct)


def test_a_folder_is_scanned_file_by_file_and_links_are_not_read(tmp_path: Path) -> None:
    (tmp_path / "helpers").mkdir()
    (tmp_path / "helpers" / "spy.py").write_text("import ctypes\n")
    (tmp_path / "part1_inplace.py").write_text("from helpers.spy import ctypes\n")
    (tmp_path / "notes.txt").write_text("import ctypes\n")
    (tmp_path / "linked.py").symlink_to(tmp_path / "helpers" / "spy.py")
    assert [(f["file"], f["line"], f["construct"]) for f in scan_folder(tmp_path)] == [
        ("helpers/spy.py", 1, "import ctypes")]


def test_a_module_handed_in_compiled_is_flagged_and_python_s_own_caches_are_not(
        tmp_path: Path) -> None:
    """Bytecode or an extension that Python would import (beside the .py or instead of it)
    holds code the scan cannot read: one flag each; the caches in __pycache__ that running
    Python leaves are nobody's news."""
    (tmp_path / "helpers" / "__pycache__").mkdir(parents=True)
    (tmp_path / "__pycache__").mkdir()
    for name in ("helpers/fast.abi3.so", "helpers/__pycache__/fast.cpython-311.pyc",
                 "__pycache__/part1_inplace.cpython-311.pyc", "part2_out_of_place.pyc",
                 f"part3_backward{importlib.machinery.EXTENSION_SUFFIXES[0]}", "notes.so.txt"):
        (tmp_path / name).write_bytes(b"\x7fELF")
    (tmp_path / "part3_backward.py").write_text("def f():\n    return 1\n")
    assert [(f["file"], f["line"], f["rule"]) for f in scan_folder(tmp_path)] == [
        ("helpers/fast.abi3.so", 0, review.COMPILED),
        ("part2_out_of_place.pyc", 0, review.COMPILED),
        (f"part3_backward{importlib.machinery.EXTENSION_SUFFIXES[0]}", 0, review.COMPILED)]


def test_the_scan_reads_the_utf8_text_the_grader_runs_and_flags_text_shown_otherwise() -> None:
    """The scan reviews what the grader runs, the file's UTF-8 text (a coding declaration
    cannot hide code in what reads as a comment), and flags what some screens show other than
    it reads: a declaration under which the file reads differently, a carriage return inside a
    line (a terminal prints what follows over what came before), a bidirectional control, a
    character that shows as nothing or moves the cursor (a form feed alone on its line is a
    page break, and no news), a name Python reads as another; a file that is not UTF-8 does
    not parse."""
    utf7 = b"# -*- coding: utf-7 -*-\nx = 1  # +AAo-import os+AAo-os.fork()\n"
    assert [(f["line"], f["rule"], f["construct"]) for f in scan_source("p.py", utf7)] == [
        (1, review.MISLEADING, "declares the encoding 'utf-7', in which it reads as other text "
                               "(graded as UTF-8)")]
    latin = b"# coding: latin-1\nx = 1\n"
    assert scan_source("p.py", latin) == []
    overprinted = b"import os\nx = os.fork()\r# nothing here\r\ny = 2\r\n"
    assert [(f["line"], f["rule"]) for f in scan_source("p.py", overprinted)] == [
        (2, review.MISLEADING), (2, "processes")]
    reordered = "ok = 'user\u202e \u2066// admin\u2069 \u2066'\n".encode()
    assert [(f["line"], f["construct"]) for f in scan_source("p.py", reordered)] == [
        (1, "bidirectional control U+202E, U+2066, U+2069 (the line is shown in another "
            "order)")]
    assert [(f["line"], f["rule"], f["construct"])
            for f in scan_source("p.py", b"x = 1\ny = '\xe9'\n")] == [
        (2, review.NOT_PARSED, "byte 0xe9 on line 2 is not UTF-8 text")]
    hidden = ("def prefix(W):\n    raise NotImplementedError\n\f\n"
              "def \uff50refix(W):  # \uff50 is a wide p\n    return W  # done\x0breturn 0\n"
              "admin = name == 'root\u200b'\n").encode()
    assert [(f["line"], f["construct"]) for f in scan_source("p.py", hidden)] == [
        (4, "the name '\uff50refix', which Python reads as 'prefix'"),
        (5, "control character U+000B"),
        (6, "invisible character U+200B")]
    lookalike = ("def prefix(W):\n    return W\n"
                 "def prefix\ufe00(W):\n    raise NotImplementedError\n"
                 "out = \u05d1 @ \u05d0  # shown as \u05d0 @ \u05d1\n"
                 "# done\u2028return prefix(W)\n"
                 "if out:\n    \tpass\n").encode()
    assert [(f["line"], f["construct"]) for f in scan_source("p.py", lookalike)] == [
        (3, "invisible character U+FE00"),
        (5, "the right-to-left name '\u05d1' (the line around it may show in another order)"),
        (5, "the right-to-left name '\u05d0' (the line around it may show in another order)"),
        (6, "line separator U+2028"),
        (8, "indentation of tabs and spaces mixed (its depth depends on the tab width)")]
    # A one-byte declaration is read only where each byte reads as what others show: under
    # mac-arabic, 0xA2 is a quote mark that closes a string no viewer shows closed.
    hidden_quote = b'# -*- coding: mac-arabic -*-\nS = """draft \xa2\xa2\xa2\nx = 1\n"""\n'
    assert [(f["line"], f["rule"]) for f in scan_source("p.py", hidden_quote)] == [
        (2, review.NOT_PARSED)]


def test_the_line_shown_lists_the_first_flags_and_counts_the_rest() -> None:
    flags = scan_source("p.py", b"import os\n" + b"os.fork()\n" * 7)
    assert flags_line(flags) == (
        "flagged for review: " + "; ".join(f"p.py:{n} os.fork: starts or signals processes"
                                           for n in range(2, 7)) + " (+2 more)")
    assert flags_line(flags, None).count("os.fork") == 7


# --- the flags in `grade`'s table, JSON and CSV --------------------------------------------

SPY = '''
import os as _os
_probe = _os.fork  # never called: the scan reads code, it does not run it
'''


@pytest.fixture(scope="module")
def flagged_batch(grading, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Part 1 of a correct submission with a line no solution needs, and of a correct one
    written plainly, graded as a coach would: `grade` run from the class's folder."""
    root = tmp_path_factory.mktemp("review")
    spy = write_workspace(root / "subs" / "spy", "torch") / "exercises" / "part1_inplace.py"
    spy.write_text(spy.read_text() + SPY)
    write_workspace(root / "subs" / "plain", "torch")
    (root / "grader.toml").write_text('flavor = "torch"\nparts = ["part1"]\ntimeout = 30\n')
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(root)
        lend_pool(patch, lambda: LentWorker(grading.worker), jobs=1)
        table = CliRunner().invoke(cli, ["grade", "subs", "--config", "grader.toml", "--seed",
                                         "7", "--csv", "grades.csv"], env={"COLUMNS": "120"})
    assert table.exit_code == 0, table.output
    line = len(spy.read_text().splitlines())
    return {"table": table.stdout, "csv": (root / "grades.csv").read_text(), "line": line}


def test_the_table_says_what_was_flagged_and_the_score_stands(
        flagged_batch: dict[str, Any]) -> None:
    """(The JSON's flags are pinned in test_grade, the cohort report's in test_cohort_report,
    on their batches.)"""
    assert matches_golden("grade-flagged-120.txt", flagged_batch["table"])


def test_the_csv_has_a_flags_column(flagged_batch: dict[str, Any]) -> None:
    lines = {Path(line["path"]).name: line
             for line in csv.DictReader(io.StringIO(flagged_batch["csv"]))}
    assert lines["spy"]["flags"] == \
        f"part1_inplace.py:{flagged_batch['line']} os.fork: starts or signals processes"
    assert lines["plain"]["flags"] == "" and lines["spy"]["score"] == "20.0"


@pytest.mark.parametrize("source", [
    "import tracemalloc\ntracemalloc.get_traced_memory = lambda: (0, 0)\n",
    "import time as clock\nclock.perf_counter = lambda: 0.0\n",
    "from gc import *\nimport gc\nsetattr(gc, 'collect', print)\n",
])
def test_patching_a_module_the_grader_measures_with_is_flagged(source: str) -> None:
    assert {flag["rule"] for flag in scan_source("x.py", source.encode())} \
        >= {"patches-measurement"}


@pytest.mark.parametrize("source", [
    "import numpy as np\nTABLE = np.load('weights.npy', allow_pickle=True)\n",
    "from numpy import load\nx = load('t.npz')\n",
    "import torch\nstate = torch.load('answers.pt')\n",
    "import joblib\nmodel = joblib.load('m.pkl')\n",
])
def test_loading_files_that_can_hold_pickled_code_is_flagged(source: str) -> None:
    """No solution reads data files; numpy's, torch's and joblib's loaders can unpickle, and a
    pickle runs code when loaded, where no scan of the Python files can see it."""
    assert "unpickling" in {flag["rule"] for flag in scan_source("x.py", source.encode())}
