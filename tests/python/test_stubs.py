# SPDX-FileCopyrightText: 2026 tensordiag contributors
# SPDX-License-Identifier: Apache-2.0
"""Every public name has a type stub and a docstring."""

import ast
import importlib
import pathlib

import pytest

MODULES = ["tensordiag", "tensordiag.errors", "tensordiag.dtensor", "tensordiag.trace",
           "tensordiag.report", "tensordiag.torch"]


def import_or_skip(name):
    if name != "tensordiag.torch":
        return importlib.import_module(name)
    try:  # needs PyTorch >= 2.4
        return importlib.import_module(name)
    except ImportError as e:
        pytest.skip(f"{name}: {e}")


def stub_names(module):
    stub = pathlib.Path(module.__file__).with_suffix(".pyi")
    tree = ast.parse(stub.read_text())
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.ClassDef, ast.FunctionDef)):
            names.add(node.name)
        elif isinstance(node, ast.ImportFrom):
            names.update(alias.asname or alias.name for alias in node.names)
        elif isinstance(node, ast.AnnAssign):
            names.add(node.target.id)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets)
    return names


@pytest.mark.parametrize("name", MODULES)
def test_public_names_have_stubs_and_docs(name):
    module = import_or_skip(name)
    missing = sorted(set(module.__all__) - stub_names(module))
    assert not missing, f"{name}.pyi lacks {missing}"
    assert module.__doc__
    for public in module.__all__:
        obj = getattr(module, public)
        if callable(obj):
            assert obj.__doc__, f"{name}.{public} has no docstring"
