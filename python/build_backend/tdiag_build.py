# SPDX-FileCopyrightText: 2026 tensordiag contributors
# SPDX-License-Identifier: Apache-2.0
"""PEP 517/660 backend of the tensordiag package, standard library only (builds offline).

Wheel: configures the repository's CMake project for the target interpreter, builds the target
tensordiag_wheel (the pybind11 module, tdiag, tdiag-view and libtdiag_capture.so where they are
built, every exported library) in <repo>/build-python-<tag>/, installs the libraries, headers and
CMake package into the build tree's package (<build>/python/tensordiag: include/, lib/, bin/),
copies every shared library the binaries need beyond the manylinux baseline (glibc, libstdc++,
libgcc_s, libGL, libX11, ...; the GPU driver's and CUDA's libraries too) into tensordiag/lib,
where the run paths ($ORIGIN/lib, $ORIGIN/../lib) find them, and zips that package. The platform
tag is computed from the binaries: manylinux_X_Y for the newest glibc symbol version they need
(and the glibc of the oldest mainstream distribution whose libstdc++ has the newest GLIBCXX
version they need). zlib, zstd and Boost.Stacktrace are linked statically
(TDIAG_PREFER_STATIC_DEPS) where static archives exist.

Sdist: the tracked sources the build needs (the C++ tree and python/), PKG-INFO and a
pyproject.toml at its root that points at python/build_backend. Editable (PEP 660): the build
above, and a .pth whose finder makes the package span python/tensordiag (sources) and the build
tree's package (compiled module, programs, headers); rebuild with the same pip command after C++
changes.

config_settings / environment: TDIAG_BUILD_TYPE (default Release), TDIAG_BUILD_DIR,
TDIAG_CMAKE_ARGS (extra arguments, space-separated), TDIAG_PYTHON (build for another
interpreter, which needs its headers and pybind11; default: the one running the backend),
TDIAG_BUILD_JOBS (default: the CPU count). CMake and ninja print to stderr (``pip -v`` shows it).
When <repo>/.devlibs exists (scripts/gpu/stage-python: a machine without our Debian libraries),
CMake finds the libraries there.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import os
import platform
import re
import shutil
import stat
import subprocess
import sys
import tarfile
import zipfile

_HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGE_ROOT = os.path.dirname(_HERE)
REPO = os.path.dirname(PACKAGE_ROOT)
NAME = "tensordiag"
SUMMARY = "Debugging and diagnostics for GPU and distributed tensors"
DEPENDENCIES = ["numpy"]
EXTRAS = {"pandas": ["pandas"], "plot": ["matplotlib"], "arrow": ["pyarrow"],
          "polars": ["pyarrow", "polars"]}
REQUIRES_PYTHON = ">=3.8"
# What an sdist carries: the C++ tree the wheel's build needs and python/ (tests, samples,
# benchmarks and docs are not built by the backend).
SDIST_TOP = ("CMakeLists.txt", "CMakePresets.json", "README.md", "LICENSE", "cmake", "core",
             "assertions", "dtensor_checks", "trace", "capture", "cli", "viewer", "python")
# Libraries a wheel may expect on the system (PEP 600's manylinux baseline, as auditwheel's
# policies list it) and those of the GPU driver, CUDA and NCCL (they come with the driver, the
# toolkit or PyTorch's own wheels): never bundled.
SYSTEM_LIBRARIES = re.compile(
    r"^(linux-vdso|ld-linux.*|libc|libm|libdl|librt|libpthread|libgcc_s|libstdc\+\+|libresolv|"
    r"libutil|libnsl|libcrypt|libGL|libGLX|libEGL|libOpenGL|libX11|libXext|libXrender|libICE|"
    r"libSM|libxcb|libXau|libXdmcp|libglib-2\.0|libgobject-2\.0|libgthread-2\.0|"
    r"libcuda|libcudart|libcupti|libnvidia.*|libnvrtc|libnccl)\.so")
# GLIBCXX_3.4.N -> the glibc of the oldest mainstream distribution whose system libstdc++ has it
# (manylinux_2_28: AlmaLinux 8, GCC 8; 2_31: Ubuntu 20.04, GCC 10; 2_34: AlmaLinux 9, GCC 11;
# 2_35: Ubuntu 22.04, GCC 12; 2_38: Ubuntu 23.10, GCC 13; 2_39: Ubuntu 24.04, GCC 14).
GLIBCXX_FLOOR = {19: (2, 17), 21: (2, 24), 22: (2, 24), 24: (2, 27), 25: (2, 28), 26: (2, 31),
                 28: (2, 31), 29: (2, 34), 30: (2, 35), 31: (2, 38), 32: (2, 38), 33: (2, 39)}


def _log(*parts) -> None:
    print("tdiag_build:", *parts, file=sys.stderr, flush=True)


def _version() -> str:
    with open(os.path.join(REPO, "CMakeLists.txt"), encoding="utf-8") as f:
        match = re.search(r"project\(tensordiag VERSION ([0-9.]+)", f.read())
    if not match:
        raise RuntimeError(f"tdiag_build: no project version in {REPO}/CMakeLists.txt")
    return match.group(1)


def _setting(config_settings, key, default=""):
    if config_settings and key in config_settings:
        return str(config_settings[key])
    return os.environ.get(key, default)


def _clean_env() -> dict:
    # pip's build isolation hides site-packages through PYTHONPATH; pybind11 installed with pip
    # (the GPU machine) must stay visible to CMake's probe.
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    env.pop("PYTHONNOUSERSITE", None)
    return env


class _Interpreter:
    """The interpreter the module is built for (TDIAG_PYTHON, default this one)."""

    _PROBE = ("import json, sys\n"
              "try:\n    import pybind11; d = pybind11.get_cmake_dir()\n"
              "except Exception:\n    d = ''\n"
              "print(json.dumps([sys.version_info[0], sys.version_info[1],"
              " getattr(sys, 'abiflags', ''), d]))")

    def __init__(self, config_settings) -> None:
        self.executable = _setting(config_settings, "TDIAG_PYTHON") or sys.executable
        result = subprocess.run([self.executable, "-c", self._PROBE], env=_clean_env(),
                                capture_output=True, text=True)
        if result.returncode != 0:
            raise RuntimeError(f"tdiag_build: {self.executable} does not run: {result.stderr}")
        major, minor, self.abiflags, self.pybind11_dir = json.loads(result.stdout)
        self.tag = f"cp{major}{minor}"

    @property
    def abi(self) -> str:
        return f"{self.tag}{self.abiflags}"


def _run(cmd, env) -> None:
    _log(" ".join(cmd))
    result = subprocess.run(cmd, env=env, stdout=sys.stderr)
    if result.returncode != 0:
        raise RuntimeError(f"tdiag_build: command failed with status {result.returncode}: "
                           f"{' '.join(cmd)}")


def _machine() -> str:
    return platform.machine() or "x86_64"


def _build(config_settings, python: _Interpreter) -> str:
    """Configures and builds tensordiag_wheel, installs into the build tree's package; returns
    the build folder."""
    if not os.path.exists(os.path.join(REPO, "CMakeLists.txt")):
        raise RuntimeError(f"tdiag_build: {REPO} is not the tensordiag repository or its sdist")
    cmake = shutil.which("cmake")
    if cmake is None:
        raise RuntimeError("tdiag_build: cmake not found (apt-get install cmake)")
    build_dir = _setting(config_settings, "TDIAG_BUILD_DIR") or os.path.join(
        REPO, f"build-python-{python.abi}-{_machine()}")
    package = os.path.join(build_dir, "python", NAME)
    env = _clean_env()
    args = [cmake, "-S", REPO, "-B", build_dir,
            f"-DCMAKE_BUILD_TYPE={_setting(config_settings, 'TDIAG_BUILD_TYPE', 'Release')}",
            "-DTDIAG_WITH_PYTHON=ON", f"-DPython_EXECUTABLE={python.executable}",
            "-DTDIAG_ENABLE_TESTING=OFF", "-DTDIAG_ENABLE_INSTALL=ON",
            "-DTDIAG_ENABLE_BENCHMARKS=OFF", "-DTDIAG_WITH_HIP=OFF", "-DTDIAG_WITH_NCCL=OFF",
            "-DTDIAG_PREFER_STATIC_DEPS=ON",
            # Installed executables and libraries find the bundled ones in <package>/lib.
            "-DCMAKE_INSTALL_RPATH=$ORIGIN/../lib", "-DCMAKE_INSTALL_LIBDIR=lib"]
    if not os.path.exists(os.path.join(build_dir, "CMakeCache.txt")) and shutil.which("ninja"):
        args += ["-G", "Ninja"]
    if python.pybind11_dir:
        args.append(f"-Dpybind11_DIR={python.pybind11_dir}")
    devlibs = os.path.join(REPO, ".devlibs")
    if os.path.isdir(devlibs):
        args.append(f"-DCMAKE_PREFIX_PATH={devlibs}")
    if shutil.which("ccache"):
        env.setdefault("CCACHE_BASEDIR", REPO)
        env.setdefault("CCACHE_NOHASHDIR", "1")
        args += ["-DCMAKE_CXX_COMPILER_LAUNCHER=ccache", "-DCMAKE_C_COMPILER_LAUNCHER=ccache"]
    args += _setting(config_settings, "TDIAG_CMAKE_ARGS").split()
    _run(args, env)
    jobs = _setting(config_settings, "TDIAG_BUILD_JOBS") or str(os.cpu_count() or 2)
    _run([cmake, "--build", build_dir, "--target", "tensordiag_wheel", "-j", jobs], env)
    _run([cmake, "--install", build_dir, "--prefix", package, "--strip"], env)
    _bundle(package)
    return build_dir


# --- shared libraries and the platform tag -------------------------------------------------------

def _is_elf(path: str) -> bool:
    if os.path.islink(path) or not os.path.isfile(path):
        return False
    with open(path, "rb") as f:
        return f.read(4) == b"\x7fELF"


def _elf_files(package: str):
    for root, dirs, names in os.walk(package):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(names):
            path = os.path.join(root, name)
            if not name.endswith(".a") and _is_elf(path):
                yield path


def _needed(path: str):
    """(soname, resolved path or None) of each library ``path`` itself needs (its NEEDED
    entries, not theirs: a baseline library's own dependencies are the system's business),
    resolved as the loader would (ldd)."""
    dynamic = subprocess.run(["objdump", "-p", path], capture_output=True, text=True).stdout
    needed = re.findall(r"^\s*NEEDED\s+(\S+)", dynamic, re.M)
    resolved = {}
    for line in subprocess.run(["ldd", path], capture_output=True, text=True).stdout.splitlines():
        match = re.match(r"\s*(\S+)\s+=>\s+(not found|\S+)", line)
        if match:
            resolved[match.group(1)] = None if match.group(2) == "not found" else match.group(2)
    for soname in needed:
        yield soname, resolved.get(soname)


def _bundle(package: str) -> None:
    """Copies into <package>/lib every shared library the package's binaries load that is not
    part of the system baseline, until none is missing."""
    lib = os.path.join(package, "lib")
    os.makedirs(lib, exist_ok=True)
    done = set()
    pending = list(_elf_files(package))
    while pending:
        path = pending.pop()
        if path in done:
            continue
        done.add(path)
        for soname, resolved in _needed(path):
            if os.path.exists(os.path.join(lib, soname)):
                continue
            staged = os.path.join(REPO, ".devlibs", "lib", soname)
            if resolved is None and os.path.isfile(staged):
                # scripts/gpu/stage-python's copy: this machine lacks the library, so may the
                # wheel's users, even of a baseline one (the viewer's libGL on a headless host).
                resolved = staged
            elif SYSTEM_LIBRARIES.match(soname):
                continue
            if resolved is None:
                raise RuntimeError(f"tdiag_build: {path} needs {soname}, which the loader does "
                                   "not find; it cannot be bundled")
            target = os.path.join(lib, soname)
            _log(f"bundling {resolved} as lib/{soname} (needed by {os.path.relpath(path, package)})")
            shutil.copyfile(resolved, target)
            os.chmod(target, 0o755)
            if shutil.which("patchelf"):
                subprocess.run(["patchelf", "--set-rpath", "$ORIGIN", target], check=True)
            pending.append(target)


def _symbol_versions(path: str):
    """The GLIBC_x.y and GLIBCXX_3.4.z versions ``path`` needs (objdump -T, undefined symbols)."""
    result = subprocess.run(["objdump", "-T", path], capture_output=True, text=True)
    glibc, glibcxx = set(), set()
    for line in result.stdout.splitlines():
        if "*UND*" not in line:
            continue
        for major, minor in re.findall(r"\bGLIBC_(\d+)\.(\d+)", line):
            glibc.add((int(major), int(minor)))
        for patch in re.findall(r"\bGLIBCXX_3\.4\.(\d+)", line):
            glibcxx.add(int(patch))
    return glibc, glibcxx


def platform_floor(package: str):
    """(newest GLIBC version, newest GLIBCXX patch, platform tag) of the package's binaries: the
    tag's glibc is the newer of the GLIBC version and the one GLIBCXX_FLOOR gives for the
    GLIBCXX version; linux_<arch> when objdump is missing."""
    if shutil.which("objdump") is None:
        _log("objdump not found (binutils): the wheel is tagged linux, not manylinux")
        return (0, 0), None, f"linux_{_machine()}"
    glibc, glibcxx = {(2, 17)}, set()
    for path in _elf_files(package):
        g, gxx = _symbol_versions(path)
        glibc |= g
        glibcxx |= gxx
    newest = max(glibc)
    floor = newest
    newest_cxx = max(glibcxx) if glibcxx else None
    if newest_cxx is not None:
        known = [v for k, v in GLIBCXX_FLOOR.items() if k >= newest_cxx]
        floor = max(floor, min(known) if known else max(GLIBCXX_FLOOR.values()))
    return newest, newest_cxx, f"manylinux_{floor[0]}_{floor[1]}_{_machine()}"


# --- metadata ----------------------------------------------------------------------------------

def _metadata(version: str) -> str:
    lines = ["Metadata-Version: 2.1", f"Name: {NAME}", f"Version: {version}",
             f"Summary: {SUMMARY}", "License: Apache-2.0", f"Requires-Python: {REQUIRES_PYTHON}"]
    lines += [f"Requires-Dist: {dep}" for dep in DEPENDENCIES]
    for extra, deps in EXTRAS.items():
        lines.append(f"Provides-Extra: {extra}")
        lines += [f"Requires-Dist: {dep}; extra == \"{extra}\"" for dep in deps]
    lines.append("Description-Content-Type: text/markdown")
    readme = os.path.join(REPO, "README.md")
    body = open(readme, encoding="utf-8").read() if os.path.exists(readme) else SUMMARY
    return "\n".join(lines) + "\n\n" + body


def _entry_points(viewer: bool) -> str:
    text = "[console_scripts]\ntdiag = tensordiag._programs:tdiag\n"
    if viewer:
        text += "tdiag-view = tensordiag._programs:tdiag_view\n"
    return text


def _wheel_file(tag: str) -> str:
    return f"Wheel-Version: 1.0\nGenerator: tdiag_build\nRoot-Is-Purelib: false\nTag: {tag}\n"


def _python_tag(python: _Interpreter, platform_tag: str) -> str:
    return f"{python.tag}-{python.abi}-{platform_tag}"


def _write_dist_info(directory: str, version: str) -> str:
    name = f"{NAME}-{version}.dist-info"
    os.makedirs(os.path.join(directory, name), exist_ok=True)
    with open(os.path.join(directory, name, "METADATA"), "w", encoding="utf-8") as f:
        f.write(_metadata(version))
    # The viewer's command is listed only when it is built: decided by the build, not here.
    with open(os.path.join(directory, name, "entry_points.txt"), "w", encoding="utf-8") as f:
        f.write(_entry_points(viewer=False))
    return name


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def get_requires_for_build_editable(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    return _write_dist_info(metadata_directory, _version())


def prepare_metadata_for_build_editable(metadata_directory, config_settings=None):
    return _write_dist_info(metadata_directory, _version())


# --- wheels ------------------------------------------------------------------------------------

def _package_files(package: str):
    files = []
    for root, dirs, names in os.walk(package):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(names):
            path = os.path.join(root, name)
            if not name.endswith(".pyc") and not os.path.islink(path):
                files.append((path, f"{NAME}/{os.path.relpath(path, package)}"))
    if not any(arc.startswith(f"{NAME}/_tensordiag") for _, arc in files):
        raise RuntimeError(f"tdiag_build: the module _tensordiag was not built in {package}")
    return files


def _record_line(arcname: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{arcname},sha256={digest},{len(data)}"


def _write_wheel(path: str, entries, dist_info: str) -> None:
    records = []
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as wheel:
        for arcname, data, executable in entries:
            info = zipfile.ZipInfo(arcname, date_time=(2026, 1, 1, 0, 0, 0))
            # A regular file's type bits too: pip sets the executable bit only on those.
            info.external_attr = (stat.S_IFREG | (0o755 if executable else 0o644)) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            wheel.writestr(info, data)
            records.append(_record_line(arcname, data))
        records.append(f"{dist_info}/RECORD,,")
        wheel.writestr(f"{dist_info}/RECORD", "\n".join(records) + "\n")


def _dist_info_entries(version: str, tag: str, viewer: bool):
    dist_info = f"{NAME}-{version}.dist-info"
    return dist_info, [(f"{dist_info}/METADATA", _metadata(version).encode(), False),
                       (f"{dist_info}/WHEEL", _wheel_file(tag).encode(), False),
                       (f"{dist_info}/entry_points.txt", _entry_points(viewer).encode(), False)]


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    version = _version()
    python = _Interpreter(config_settings)
    build_dir = _build(config_settings, python)
    package = os.path.join(build_dir, "python", NAME)
    glibc, newest_cxx, platform_tag = platform_floor(package)
    _log(f"newest symbol versions GLIBC_{glibc[0]}.{glibc[1]}, GLIBCXX_3.4.{newest_cxx}: "
         f"{platform_tag}")
    tag = _python_tag(python, platform_tag)
    viewer = os.path.exists(os.path.join(package, "bin", "tdiag-view"))
    dist_info, meta = _dist_info_entries(version, tag, viewer)
    entries = []
    for path, arcname in _package_files(package):
        with open(path, "rb") as f:
            entries.append((arcname, f.read(), _is_elf(path) and not path.endswith(".a")))
    wheel_name = f"{NAME}-{version}-{tag}.whl"
    _write_wheel(os.path.join(wheel_directory, wheel_name), entries + meta, dist_info)
    _log(f"wrote {wheel_name} ({len(entries)} files)")
    return wheel_name


_FINDER = '''# Generated by tensordiag's build backend (editable install, PEP 660).
import importlib.util
import sys

SOURCES = {sources!r}
BUILD = {build!r}


class _TensordiagFinder:
    """tensordiag from its sources, with the build tree's package (compiled module, programs,
    headers) as a second folder of the package."""

    @classmethod
    def find_spec(cls, name, path=None, target=None):
        if name != "tensordiag":
            return None
        return importlib.util.spec_from_file_location(
            name, SOURCES + "/__init__.py", submodule_search_locations=[SOURCES, BUILD])


if not any(getattr(f, "__name__", "") == "_TensordiagFinder" for f in sys.meta_path):
    sys.meta_path.append(_TensordiagFinder)
'''


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    version = _version()
    python = _Interpreter(config_settings)
    build_dir = _build(config_settings, python)
    package = os.path.join(build_dir, "python", NAME)
    tag = _python_tag(python, f"linux_{_machine()}")
    viewer = os.path.exists(os.path.join(package, "bin", "tdiag-view"))
    dist_info, meta = _dist_info_entries(version, tag, viewer)
    finder = _FINDER.format(sources=os.path.join(PACKAGE_ROOT, NAME), build=package)
    entries = [("__editable___tensordiag_finder.py", finder.encode(), False),
               ("__editable___tensordiag.pth", b"import __editable___tensordiag_finder\n", False)]
    wheel_name = f"{NAME}-{version}-{tag}.whl"
    _write_wheel(os.path.join(wheel_directory, wheel_name), entries + meta, dist_info)
    _log(f"wrote editable {wheel_name}: sources {PACKAGE_ROOT}/{NAME}, build {package}")
    return wheel_name


# --- sdist -------------------------------------------------------------------------------------

def _sdist_files():
    """Repository-relative paths of the sdist: git's tracked files under SDIST_TOP, or (an sdist
    built from an sdist) every file there but build outputs."""
    if os.path.isdir(os.path.join(REPO, ".git")) or os.path.isfile(os.path.join(REPO, ".git")):
        result = subprocess.run(["git", "-C", REPO, "ls-files", "-z", "--", *SDIST_TOP],
                                capture_output=True)
        if result.returncode == 0:
            return sorted(p for p in result.stdout.decode().split("\0")
                          if p and os.path.isfile(os.path.join(REPO, p)))
    files = []
    for top in SDIST_TOP:
        path = os.path.join(REPO, top)
        if os.path.isfile(path):
            files.append(top)
        for root, dirs, names in os.walk(path):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__" and not d.startswith("build"))
            files += [os.path.relpath(os.path.join(root, n), REPO) for n in sorted(names)
                      if not n.endswith(".pyc")]
    return files


def build_sdist(sdist_directory, config_settings=None):
    version = _version()
    base = f"{NAME}-{version}"
    name = f"{base}.tar.gz"

    def add_bytes(tar, arcname, data):
        info = tarfile.TarInfo(f"{base}/{arcname}")
        info.size, info.mtime, info.mode = len(data), 1767225600, 0o644
        tar.addfile(info, io.BytesIO(data))

    with tarfile.open(os.path.join(sdist_directory, name), "w:gz", format=tarfile.PAX_FORMAT) as tar:
        for relative in _sdist_files():
            if relative in ("pyproject.toml", "PKG-INFO"):
                continue
            tar.add(os.path.join(REPO, relative), arcname=f"{base}/{relative}", recursive=False)
        with open(os.path.join(PACKAGE_ROOT, "pyproject.toml"), encoding="utf-8") as f:
            pyproject = f.read().replace('backend-path = ["build_backend"]',
                                         'backend-path = ["python/build_backend"]')
        add_bytes(tar, "pyproject.toml", pyproject.encode())
        add_bytes(tar, "PKG-INFO", _metadata(version).encode())
    _log(f"wrote {name} ({len(_sdist_files())} files)")
    return name


__all__ = ["build_wheel", "build_sdist", "build_editable", "get_requires_for_build_wheel",
           "get_requires_for_build_sdist", "get_requires_for_build_editable",
           "prepare_metadata_for_build_wheel", "prepare_metadata_for_build_editable",
           "platform_floor"]
