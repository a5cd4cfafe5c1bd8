# SPDX-FileCopyrightText: 2026 tensordiag contributors
# SPDX-License-Identifier: Apache-2.0
"""The package as pip installs it: its programs, headers and CMake package, its shared libraries
all found, the console commands; and the build backend's sdist and metadata."""

import os
import pathlib
import shutil
import subprocess
import sys
import tarfile

import pytest

import tensordiag
from tensordiag import _programs

HERE = pathlib.Path(__file__).resolve().parent
SOURCE_DIR = pathlib.Path(os.environ.get("TDIAG_SOURCE_DIR", HERE.parent.parent))
BACKEND = SOURCE_DIR / "python/build_backend"


@pytest.fixture(scope="module")
def backend():
    if not (BACKEND / "tdiag_build.py").exists():
        pytest.skip(f"no build backend at {BACKEND} (set TDIAG_SOURCE_DIR to a checkout)")
    sys.path.insert(0, str(BACKEND))
    try:
        import tdiag_build
    finally:
        sys.path.remove(str(BACKEND))
    return tdiag_build


def test_tdiag_program_runs():
    path = _programs.program("tdiag")
    result = subprocess.run([path, "--version"], capture_output=True, text=True)
    assert result.returncode == 0 and tensordiag.__version__ in result.stdout


def test_missing_program_is_an_oserror():
    with pytest.raises(FileNotFoundError, match="no tdiag-nope program"):
        _programs.program("tdiag-nope")


def test_console_commands_when_installed():
    scripts = pathlib.Path(sys.executable).parent
    if not (scripts / "tdiag").exists():
        pytest.skip(f"no tdiag console command beside {sys.executable} (not a pip install)")
    result = subprocess.run([str(scripts / "tdiag"), "--help"], capture_output=True, text=True)
    assert result.returncode == 0 and "trace" in result.stdout
    if (pathlib.Path(tensordiag.__path__[-1]) / "bin/tdiag-view").exists():
        view = subprocess.run([str(scripts / "tdiag-view"), "--help"], capture_output=True,
                              text=True)
        assert view.returncode == 0, view.stderr


def test_headers_and_cmake_package():
    try:
        include, cmake_dir = tensordiag.get_include(), tensordiag.get_cmake_dir()
    except FileNotFoundError as e:
        pytest.skip(f"this installation has no headers (a build tree, not a wheel): {e}")
    assert (pathlib.Path(include) / "tensordiag/trace/trace.hpp").exists()
    assert (pathlib.Path(cmake_dir) / "tensordiag-config.cmake").exists()
    assert list(pathlib.Path(tensordiag.get_library_dir()).glob("libtdiag_*.a"))


def test_every_shared_library_is_found():
    if shutil.which("ldd") is None:
        pytest.skip("no ldd")
    binaries = list(pathlib.Path(tensordiag.__path__[-1]).glob("_tensordiag*.so"))
    binaries += [pathlib.Path(_programs.program("tdiag"))]
    for binary in binaries:
        out = subprocess.run(["ldd", str(binary)], capture_output=True, text=True).stdout
        assert "not found" not in out, f"{binary}:\n{out}"


def test_metadata_matches_pyproject(backend):
    tomllib = pytest.importorskip("tomllib")
    with open(SOURCE_DIR / "python/pyproject.toml", "rb") as f:
        project = tomllib.load(f)["project"]
    assert project["dependencies"] == backend.DEPENDENCIES
    assert project["optional-dependencies"] == backend.EXTRAS
    assert project["requires-python"] == backend.REQUIRES_PYTHON
    metadata = backend._metadata(backend._version())
    assert "Requires-Dist: numpy\n" in metadata
    assert 'Requires-Dist: pandas; extra == "pandas"' in metadata


def test_sdist_has_what_the_build_needs(backend, tmp_path):
    if not (SOURCE_DIR / ".git").exists():
        pytest.skip(f"{SOURCE_DIR} is not a git checkout")
    name = backend.build_sdist(str(tmp_path))
    with tarfile.open(tmp_path / name) as tar:
        names = set(tar.getnames())
        base = name[:-len(".tar.gz")]
        pyproject = tar.extractfile(f"{base}/pyproject.toml").read().decode()
    for needed in ("PKG-INFO", "CMakeLists.txt", "cmake/tdiag_dependencies.cmake",
                   "python/tensordiag/__init__.py", "python/build_backend/tdiag_build.py",
                   "python/src/module.cpp", "cli/src/main.cpp"):
        assert f"{base}/{needed}" in names, needed
    assert 'backend-path = ["python/build_backend"]' in pyproject
    assert not any(n.startswith(f"{base}/tests/") or "/build-" in n for n in names)


def test_editable_finder_spans_sources_and_build(backend, tmp_path):
    code = backend._FINDER.format(sources=str(tmp_path / "src"), build=str(tmp_path / "build"))
    compile(code, "finder", "exec")
    assert backend.SYSTEM_LIBRARIES.match("libc.so.6")
    assert not backend.SYSTEM_LIBRARIES.match("libfmt.so.9")


def test_extension_builds_against_the_cmake_package(tmp_path):
    """What an extension author does: find_package(tensordiag) from get_cmake_dir(), link."""
    try:
        cmake_dir = tensordiag.get_cmake_dir()
    except FileNotFoundError as e:
        pytest.skip(f"this installation has no CMake package: {e}")
    if shutil.which("cmake") is None or shutil.which("c++") is None:
        pytest.skip("no cmake or C++ compiler here")
    (tmp_path / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.25)\nproject(consumer CXX)\n"
        "find_package(tensordiag 0.1 CONFIG REQUIRED COMPONENTS trace)\n"
        "add_executable(consumer main.cpp)\n"
        "target_link_libraries(consumer PRIVATE tensordiag::trace)\n")
    (tmp_path / "main.cpp").write_text(
        "#include <tensordiag/trace/units.hpp>\n#include <cstdio>\n"
        "int main() { std::puts(tdiag::trace::format_bytes(3 << 20).c_str()); }\n")
    configure = subprocess.run(["cmake", "-S", str(tmp_path), "-B", str(tmp_path / "b"),
                                f"-Dtensordiag_DIR={cmake_dir}"], capture_output=True, text=True)
    if configure.returncode != 0:
        # The package finds fmt, simdjson, CLI11, Boost and zlib on the system, as an installed
        # tensordiag does: without their development packages there is nothing to check.
        for dependency in ("fmt", "simdjson", "CLI11", "Boost", "ZLIB", "zstd"):
            if dependency in configure.stderr + configure.stdout:
                pytest.skip(f"the system lacks {dependency}'s development files")
    assert configure.returncode == 0, configure.stdout + configure.stderr
    build = subprocess.run(["cmake", "--build", str(tmp_path / "b")], capture_output=True,
                           text=True)
    assert build.returncode == 0, build.stdout + build.stderr
    run = subprocess.run([str(tmp_path / "b/consumer")], capture_output=True, text=True)
    assert run.stdout.strip() == "3.00 MiB"
