# SPDX-FileCopyrightText: 2026 tensordiag contributors
# SPDX-License-Identifier: Apache-2.0
"""The packaged programs and files: ``tensordiag/bin/tdiag``, ``tensordiag/bin/tdiag-view``, the
C++ headers and the CMake package, found in the package's folders (an installed wheel, the build
tree's copy, or an editable install whose package spans the sources and the build folder)."""

from __future__ import annotations

import os
import subprocess
import sys
from typing import List, NoReturn, Optional, Sequence

_PACKAGE_DIRS: List[str] = []


def _package_dirs() -> List[str]:
    if not _PACKAGE_DIRS:
        import tensordiag

        _PACKAGE_DIRS.extend(os.path.abspath(d) for d in tensordiag.__path__)
    return _PACKAGE_DIRS


def _find(relative: str) -> Optional[str]:
    for folder in _package_dirs():
        candidate = os.path.join(folder, relative)
        if os.path.exists(candidate):
            return candidate
    return None


def program(name: str) -> str:
    """The path of a packaged program (``"tdiag"``, ``"tdiag-view"``); FileNotFoundError (an
    OSError) saying why when this installation has none."""
    found = _find(os.path.join("bin", name))
    if found is None:
        hint = (" (the viewer is built only where GLFW, OpenGL and Dear ImGui are found)"
                if name == "tdiag-view" else "")
        raise FileNotFoundError(
            f"tensordiag: this installation has no {name} program{hint}; looked in "
            + ", ".join(os.path.join(d, "bin") for d in _package_dirs()))
    return found


def run(name: str, args: Sequence[str]) -> int:
    """Runs a packaged program with ``args`` (stdin, stdout and stderr inherited) and returns its
    exit status."""
    sys.stdout.flush()
    sys.stderr.flush()
    return subprocess.run([program(name), *map(str, args)], check=False).returncode


def _exec(name: str) -> NoReturn:
    try:
        path = program(name)
    except FileNotFoundError as e:
        print(e, file=sys.stderr)
        sys.exit(2)
    sys.stdout.flush()
    sys.stderr.flush()
    # argv[0] is the command's name, so messages read as they do from an installed binary.
    os.execv(path, [name, *sys.argv[1:]])


def tdiag() -> NoReturn:
    """The ``tdiag`` console command."""
    _exec("tdiag")


def tdiag_view() -> NoReturn:
    """The ``tdiag-view`` console command."""
    _exec("tdiag-view")


def _data_dir(relative: str, what: str) -> str:
    found = _find(relative)
    if found is None:
        raise FileNotFoundError(
            f"tensordiag: this installation has no {what} ({relative} in "
            + ", ".join(_package_dirs()) + "); they come with the wheel (pip install)")
    return found


def get_include() -> str:
    """The folder of tensordiag's public C++ headers (``#include <tensordiag/trace/...>``)."""
    return _data_dir("include", "C++ headers")


def get_cmake_dir() -> str:
    """The folder of the CMake package: ``find_package(tensordiag CONFIG PATHS <this>)`` or
    ``-Dtensordiag_DIR=<this>``, as ``pybind11.get_cmake_dir()`` is used."""
    return _data_dir(os.path.join("lib", "cmake", "tensordiag"), "CMake package")


def get_library_dir() -> str:
    """The folder of the static libraries, the bundled shared ones and the capture library."""
    return _data_dir("lib", "libraries")
