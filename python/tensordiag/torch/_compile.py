# SPDX-FileCopyrightText: 2026 tensordiag contributors
# SPDX-License-Identifier: Apache-2.0
"""torch.compile's generated checks, recorded by tensordiag instead of trapping.

Inductor's back-end extension point (``register_backend_for_device``) takes a scheduling class;
ours is the registered one with its Triton scheduling replaced by ``CheckedTritonScheduling``,
whose kernel type ``CheckedTritonKernel`` generates the bounds checks of indirect indexing
(``indirect_assert``) and the device asserts of ``torch._assert_async`` (``device_assert_async``)
as calls of ``tensordiag.triton``'s recording helpers. A bounds check returns the index with its
failing elements replaced by 0, so the guarded load or store stays in bounds; the failure is
counted and the first one recorded with its value, the size, program id and lane. Each check is a
site registered at code generation with the op that produced the index and the user's source
line (from the fx node's ``stack_trace``). ``tensordiag.check()`` raises the report.

The failure buffer's address is a constant of the generated code, so graphs compiled here are
kept out of Inductor's on-disk caches (FX graph cache, AOT autograd cache) while the checks are
on: a cached graph of another process would write to a stale address.
"""

from __future__ import annotations

import dataclasses
import inspect
import os
import re
from typing import Any, Dict, List, Optional

import torch
from torch._inductor.codegen import common
from torch._inductor.codegen.triton import TritonKernel, TritonScheduling

from .. import _compiled_checks as _cc

_IMPORT = ("from tensordiag.triton import _inductor_index as tdiag_index, "
           "_inductor_assert as tdiag_assert\n")
_INDEX_OPS = ("embedding", "gather", "index", "scatter", "take", "select", "put", "bucketize")
_TMP = re.compile(r"tmp\d+")
_TORCH_DIR = os.path.dirname(torch.__file__)


def _user_frame(stack_trace: str):
    """The innermost frame of the user's code (outside torch) of an fx node's stack trace."""
    frames = _cc.user_frames(stack_trace)
    for frame in reversed(frames):
        if not os.path.abspath(frame[0]).startswith(_TORCH_DIR + os.sep):
            return frame
    return frames[-1] if frames else None


def _describe(node: Any) -> str:
    """``aten.embedding.default(f32[1000, 64], i64[4096])`` for an fx node."""
    def shape(arg: Any) -> str:
        val = getattr(arg, "meta", {}).get("val") if hasattr(arg, "meta") else None
        if isinstance(val, torch.Tensor):
            dtype = str(val.dtype).replace("torch.", "")
            return f"{dtype}[{', '.join(str(s) for s in val.shape)}]"
        return repr(arg) if not hasattr(arg, "meta") else str(arg)
    args = ", ".join(shape(a) for a in getattr(node, "args", ()))
    return f"{node.target}({args})"


def _origins(kernel: Any) -> List[Any]:
    """The fx nodes behind the node being generated, index-producing ops first."""
    node = getattr(kernel, "current_node", None)
    found = list(getattr(getattr(node, "node", None), "origins", None) or ())
    if not found and node is not None and hasattr(node, "get_nodes"):
        for n in node.get_nodes():
            found += list(getattr(getattr(n, "node", None), "origins", None) or ())

    def rank(n: Any):
        target = str(getattr(n, "target", ""))
        return (0 if any(k in target for k in _INDEX_OPS) else 1,
                0 if n.meta.get("stack_trace") else 1, n.name)
    return sorted(found, key=rank)


def _site(kernel: Any, kind: str, generated: str) -> _cc.Site:
    where: Dict[str, Any] = {"message": generated}
    origins = _origins(kernel)
    if origins:
        node = origins[0]
        where["op"] = _describe(node)
        trace = node.meta.get("stack_trace") or ""
        frame = _user_frame(trace)
        if frame is not None:
            where.update(user_file=_cc.relative(frame[0]), user_line=frame[1],
                         user_code=frame[3])
            where["stack"] = tuple(f"{_cc.relative(f)}:{line} {fn}: {code}"
                                   for f, line, fn, code in _cc.user_frames(trace))
    condition = ("index out of bounds" if kind == "index" else "device assert") + f": {generated}"
    return _cc.SITES.register(kind, condition, "<generated kernel>", **where)


def _address(kernel: Any) -> int:
    from .. import triton as tdt
    device = None
    try:
        from torch._inductor.virtualized import V
        device = V.graph.get_current_device_or_throw()
    except (ImportError, AttributeError, RuntimeError):  # older Inductor, or no graph device:
        device = None  # the current device
    return tdt.buffer_address(device if device is not None and device.type == "cuda" else None)


class CheckedTritonKernel(TritonKernel):
    """Inductor's Triton kernel whose generated checks record through tensordiag."""

    def _tdiag_sites(self) -> List[int]:
        if not hasattr(self, "_tdiag_site_ids"):
            self._tdiag_site_ids: List[int] = []
        return self._tdiag_site_ids

    def indirect_assert(self, var, lower, upper, mask=None) -> str:
        var = str(var)
        if lower and upper:
            cond, shown = f"({lower} <= {var}) & ({var} < {upper})", f"{lower} <= {var} < {upper}"
        elif lower:
            cond = shown = f"{lower} <= {var}"
        else:
            cond = shown = f"{var} < {upper}"
        site = _site(self, "index", shown)
        self._tdiag_sites().append(site.id)
        call = (f"tdiag_index({var}, {cond}, {upper or 0}, {f'({mask})' if mask else True}, "
                f"{site.id}, {_address(self)})")
        # The index comes back with its failing elements replaced by 0: the access it guards
        # stays in bounds. Only a plain temporary can be rebound; anything else only records.
        return f"{var} = {call}" if _TMP.fullmatch(var) else call

    def device_assert_async(self, cond, msg) -> None:
        site = _site(self, "check", str(msg))
        self._tdiag_sites().append(site.id)
        self.compute.writeline(f"tdiag_assert({cond}, {site.id}, {_address(self)})")

    if isinstance(inspect.getattr_static(TritonKernel, "inductor_meta_common", None),
                  (staticmethod, classmethod)):
        @classmethod
        def inductor_meta_common(cls) -> Dict[str, Any]:
            # Inductor compiles a kernel in Triton's debug mode (which keeps tl.device_assert and
            # adds overflow checks) when assert_indirect_indexing is on; these checks need none.
            meta = dict(TritonKernel.inductor_meta_common())
            meta["assert_indirect_indexing"] = False
            return meta

    def codegen_kernel(self, *args: Any, **kwargs: Any) -> str:
        code = super().codegen_kernel(*args, **kwargs)
        return _IMPORT + code if self._tdiag_sites() else code


class CheckedTritonScheduling(TritonScheduling):
    """Triton scheduling whose kernels are ``CheckedTritonKernel``s; names their sites' kernel."""

    kernel_type = CheckedTritonKernel

    def define_kernel(self, src_code, node_schedule, kernel, *args: Any, **kwargs: Any):
        name = super().define_kernel(src_code, node_schedule, kernel, *args, **kwargs)
        lines = src_code.splitlines()
        for sid in getattr(kernel, "_tdiag_site_ids", ()):
            site = _cc.SITES[sid]
            line = next((n for n, text in enumerate(lines, 1) if f", {sid}, " in text
                         and "tdiag_" in text), 0)
            _cc.SITES.fill(sid, dataclasses.replace(site, kernel=str(name), line=line))
        return name


def _checked_scheduling(base: Any) -> Any:
    """The registered scheduling with its Triton part replaced by ours."""
    if not inspect.isclass(base) or issubclass(base, TritonScheduling):
        return CheckedTritonScheduling

    class CheckedCombinedScheduling(base):
        def __init__(self, scheduler: Any) -> None:
            super().__init__(scheduler)
            if hasattr(self, "_triton_scheduling"):
                self._triton_scheduling = CheckedTritonScheduling(scheduler)

    return CheckedCombinedScheduling


_CONFIG = (("torch._inductor.config", "fx_graph_cache", False),
           ("torch._inductor.config", "fx_graph_remote_cache", False),
           ("torch._inductor.config", "assert_indirect_indexing", True),
           ("torch._functorch.config", "enable_autograd_cache", False),
           ("torch._functorch.config", "enable_remote_autograd_cache", False))


class CompileChecks:
    """The active ``compile_checks()``: ``close()`` (or leaving the ``with`` block) restores
    Inductor's registration and settings, then raises what the checks recorded."""

    def __init__(self, device: str = "cuda", raise_at_exit: bool = True) -> None:
        import importlib

        self.device = device
        self.raise_at_exit = raise_at_exit
        common.init_backend_registration()
        self._saved = common.device_codegens.get(device)
        if self._saved is None:
            raise ValueError(f"Inductor has no back-end registered for {device!r}")
        self._saved_extras = {name: dict(getattr(common, name))
                              for name in ("custom_backend_passes",
                                           "custom_backend_codegen_configs")
                              if isinstance(getattr(common, name, None), dict)}
        self._config: List[Any] = []
        for module, key, value in _CONFIG:
            mod = importlib.import_module(module)
            if hasattr(mod, key):
                self._config.append((mod, key, getattr(mod, key)))
                setattr(mod, key, value)
        saved = self._saved
        fields = {"device_wrapper_codegen": getattr(saved, "wrapper_codegen", None),
                  "device_cpp_wrapper_codegen": getattr(saved, "cpp_wrapper_codegen", None),
                  "device_fx_wrapper_codegen": getattr(saved, "fx_wrapper_codegen", None)}
        for name, key in (("custom_backend_passes", "device_custom_pass"),
                          ("custom_backend_codegen_configs", "device_custom_config")):
            if name in self._saved_extras:
                fields[key] = self._saved_extras[name].get(device)
        accepted = inspect.signature(common.register_backend_for_device).parameters
        kwargs = {k: v for k, v in fields.items() if k in accepted and v is not None}
        common.register_backend_for_device(device, _checked_scheduling(saved.scheduling),
                                           **kwargs)
        self.active = True

    def close(self) -> None:
        """Restores the original registration and settings; raises the failures recorded."""
        if not self.active:
            return
        self.active = False
        common.device_codegens[self.device] = self._saved
        for name, saved in self._saved_extras.items():
            getattr(common, name).clear()
            getattr(common, name).update(saved)
        for mod, key, value in reversed(self._config):
            setattr(mod, key, value)
        if self.raise_at_exit:
            from .. import triton as tdt
            tdt.raise_failures()

    def __enter__(self) -> "CompileChecks":
        return self

    def __exit__(self, exc_type: Optional[type], *rest: Any) -> None:
        if exc_type is not None:
            self.raise_at_exit = False
        self.close()


def compile_checks(device: str = "cuda", *, raise_at_exit: bool = True) -> CompileChecks:
    """Makes the bounds checks and device asserts of kernels torch.compile generates from now on
    record through tensordiag instead of trapping (``with compile_checks(): ...`` or call it
    and ``close()``); ``tensordiag.check()`` raises ``tensordiag.DeviceAssertionError`` naming
    the user's line, the op, the size and the bad value. Kernels compiled meanwhile keep
    recording after the block."""
    return CompileChecks(device, raise_at_exit)
