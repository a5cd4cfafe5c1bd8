# SPDX-FileCopyrightText: 2026 tensordiag contributors
# SPDX-License-Identifier: Apache-2.0
"""PEP 517 backend of the tensordiag package, standard library only (installs offline).

It configures the repository's CMake project with TDIAG_WITH_PYTHON=ON for the interpreter
running pip, builds the target tensordiag_python (the libraries, the CLI objects and the
pybind11 module) in <repo>/build-python-<tag>/, and zips the build tree's package into a wheel.
When <repo>/.devlibs exists (scripts/gpu/stage-python: a machine without our Debian libraries),
CMake finds the libraries there and the shared ones are shipped beside the module.

config_settings / environment: TDIAG_BUILD_TYPE (default Release), TDIAG_BUILD_DIR,
TDIAG_CMAKE_ARGS (extra arguments, space-separated).
"""

from __future__ import annotations

import base64
import glob
import hashlib
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import zipfile

_HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGE_ROOT = os.path.dirname(_HERE)
REPO = os.path.dirname(PACKAGE_ROOT)
NAME = "tensordiag"


def _version() -> str:
    with open(os.path.join(REPO, "CMakeLists.txt"), encoding="utf-8") as f:
        match = re.search(r"project\(tensordiag VERSION ([0-9.]+)", f.read())
    if not match:
        raise RuntimeError(f"tdiag_build: no project version in {REPO}/CMakeLists.txt")
    return match.group(1)


def _tag() -> str:
    py = f"cp{sys.version_info[0]}{sys.version_info[1]}"
    plat = sysconfig.get_platform().replace("-", "_").replace(".", "_")
    return f"{py}-{py}{getattr(sys, 'abiflags', '')}-{plat}"


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


def _run(cmd, env) -> None:
    print("tdiag_build:", " ".join(cmd), file=sys.stderr, flush=True)
    result = subprocess.run(cmd, env=env, stdout=sys.stderr)
    if result.returncode != 0:
        raise RuntimeError(f"tdiag_build: command failed with status {result.returncode}: "
                           f"{' '.join(cmd)}")


def _build(config_settings) -> str:
    if not os.path.exists(os.path.join(REPO, "CMakeLists.txt")):
        raise RuntimeError(f"tdiag_build: {REPO} is not the tensordiag repository; install from "
                           "a checkout (pip builds python/ in place)")
    cmake = shutil.which("cmake")
    if cmake is None:
        raise RuntimeError("tdiag_build: cmake not found (apt-get install cmake)")
    build_dir = _setting(config_settings, "TDIAG_BUILD_DIR") or os.path.join(
        REPO, f"build-python-{_tag()}")
    env = _clean_env()
    args = [cmake, "-S", REPO, "-B", build_dir,
            f"-DCMAKE_BUILD_TYPE={_setting(config_settings, 'TDIAG_BUILD_TYPE', 'Release')}",
            "-DTDIAG_WITH_PYTHON=ON", f"-DPython_EXECUTABLE={sys.executable}",
            "-DTDIAG_ENABLE_TESTING=OFF", "-DTDIAG_ENABLE_INSTALL=OFF",
            "-DTDIAG_ENABLE_BENCHMARKS=OFF", "-DTDIAG_WITH_CUDA=OFF", "-DTDIAG_WITH_HIP=OFF",
            "-DTDIAG_WITH_CUPTI=OFF", "-DTDIAG_WITH_NCCL=OFF", "-DTDIAG_WITH_VIEWER=OFF"]
    if not os.path.exists(os.path.join(build_dir, "CMakeCache.txt")) and shutil.which("ninja"):
        args += ["-G", "Ninja"]
    probe = subprocess.run([sys.executable, "-c", "import pybind11; print(pybind11.get_cmake_dir())"],
                           env=env, capture_output=True, text=True)
    if probe.returncode == 0 and probe.stdout.strip():
        args.append(f"-Dpybind11_DIR={probe.stdout.strip()}")
    devlibs = os.path.join(REPO, ".devlibs")
    if os.path.isdir(devlibs):
        args.append(f"-DCMAKE_PREFIX_PATH={devlibs}")
    if shutil.which("ccache"):
        env.setdefault("CCACHE_BASEDIR", REPO)
        env.setdefault("CCACHE_NOHASHDIR", "1")
        args += ["-DCMAKE_CXX_COMPILER_LAUNCHER=ccache", "-DCMAKE_C_COMPILER_LAUNCHER=ccache"]
    args += _setting(config_settings, "TDIAG_CMAKE_ARGS").split()
    _run(args, env)
    jobs = str(os.cpu_count() or 2)
    _run([cmake, "--build", build_dir, "--target", "tensordiag_python", "-j", jobs], env)
    return build_dir


def _metadata(version: str) -> str:
    return (f"Metadata-Version: 2.1\nName: {NAME}\nVersion: {version}\n"
            "Summary: Debugging and diagnostics for GPU and distributed tensors\n"
            "License: Apache-2.0\nRequires-Python: >=3.8\n")


def _wheel_file() -> str:
    return f"Wheel-Version: 1.0\nGenerator: tdiag_build\nRoot-Is-Purelib: false\nTag: {_tag()}\n"


def _write_dist_info(directory: str, version: str) -> str:
    name = f"{NAME}-{version}.dist-info"
    os.makedirs(os.path.join(directory, name), exist_ok=True)
    with open(os.path.join(directory, name, "METADATA"), "w", encoding="utf-8") as f:
        f.write(_metadata(version))
    with open(os.path.join(directory, name, "WHEEL"), "w", encoding="utf-8") as f:
        f.write(_wheel_file())
    return name


def get_requires_for_build_wheel(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    return _write_dist_info(metadata_directory, _version())


def _package_files(build_dir: str):
    package = os.path.join(build_dir, "python", NAME)
    files = []
    for root, dirs, names in os.walk(package):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(names):
            if not name.endswith(".pyc"):
                path = os.path.join(root, name)
                files.append((path, f"{NAME}/{os.path.relpath(path, package)}"))
    if not any(arc.startswith(f"{NAME}/_tensordiag") for _, arc in files):
        raise RuntimeError(f"tdiag_build: the module _tensordiag was not built in {package}")
    # Libraries staged for a machine without our Debian packages, found through RPATH $ORIGIN.
    for path in sorted(glob.glob(os.path.join(REPO, ".devlibs", "lib", "*.so.*"))):
        if os.path.isfile(path) and not os.path.islink(path):
            files.append((path, f"{NAME}/{os.path.basename(path)}"))
    return files


def _record_line(arcname: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{arcname},sha256={digest},{len(data)}"


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    version = _version()
    build_dir = _build(config_settings)
    wheel_name = f"{NAME}-{version}-{_tag()}.whl"
    dist_info = f"{NAME}-{version}.dist-info"
    records = []
    with zipfile.ZipFile(os.path.join(wheel_directory, wheel_name), "w",
                         zipfile.ZIP_DEFLATED) as wheel:
        entries = [(arc, open(path, "rb").read()) for path, arc in _package_files(build_dir)]
        entries += [(f"{dist_info}/METADATA", _metadata(version).encode()),
                    (f"{dist_info}/WHEEL", _wheel_file().encode())]
        for arcname, data in entries:
            info = zipfile.ZipInfo(arcname, date_time=(2026, 1, 1, 0, 0, 0))
            info.external_attr = (0o755 if arcname.endswith(".so") or ".so." in arcname
                                  else 0o644) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            wheel.writestr(info, data)
            records.append(_record_line(arcname, data))
        records.append(f"{dist_info}/RECORD,,")
        wheel.writestr(f"{dist_info}/RECORD", "\n".join(records) + "\n")
    return wheel_name
