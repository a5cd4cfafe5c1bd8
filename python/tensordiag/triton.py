# SPDX-FileCopyrightText: 2026 tensordiag contributors
# SPDX-License-Identifier: Apache-2.0
"""Checks inside Triton kernels that record their failures instead of trapping.

>>> import triton, triton.language as tl
>>> import tensordiag.triton as tdt
>>> ROW = tdt.site()                                   # one site per check, a module global
>>> @tdt.jit                                           # triton.jit + registers the kernel's sites
... def gather(table, idx, out, n, rows, failures, BLOCK: tl.constexpr):
...     i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
...     m = i < n
...     j = tl.load(idx + i, mask=m)
...     ok = tdt.check_index(j, rows, failures, ROW, m)   # never traps; False where j is bad
...     tl.store(out + i, tl.load(table + j, mask=m & ok), mask=m)
>>> gather[grid](table, idx, out, n, rows, tdt.failures(), BLOCK=256)   # doctest: +SKIP
>>> tensordiag.check()   # raises tensordiag.DeviceAssertionError, the report  # doctest: +SKIP

A failing element costs one predicated atomic on its site's counter; the element whose atomic
returned 0 (the first failure of that site since the last check) also writes the record: the
operands, program id, lane and grid. An element that passes costs the compare.
``tensordiag.check()``
synchronises the device, decodes the records into the same report as the C++ macros
(``TDIAG-DSA-001``) and clears the buffer: the context is never poisoned and the next operation
on the stream runs. Needs torch and triton; the report code itself is pure Python
(``tensordiag._compiled_checks``).
"""

from __future__ import annotations

import threading
from typing import Any, Callable, Dict, Optional, Union

import torch
import triton
import triton.language as tl

from . import _compiled_checks as _cc

_MAX_SITES = tl.constexpr(_cc.MAX_SITES)
_WORDS = tl.constexpr(_cc.RECORD_WORDS)

_lock = threading.Lock()
_buffers: Dict[int, torch.Tensor] = {}


def _device_index(device: Union[None, int, str, torch.device]) -> int:
    if device is None:
        return torch.cuda.current_device()
    d = torch.device(device) if not isinstance(device, int) else torch.device("cuda", device)
    if d.type != "cuda":
        raise ValueError(f"tensordiag.triton records failures on CUDA/HIP devices, not {d}")
    return torch.cuda.current_device() if d.index is None else d.index


def failures(device: Union[None, int, str, torch.device] = None) -> torch.Tensor:
    """This device's failure buffer (int64, owned by tensordiag, allocated once): pass it to a
    kernel as the ``failures`` argument of ``check``/``check_index``."""
    index = _device_index(device)
    with _lock:
        buf = _buffers.get(index)
        if buf is None:
            buf = torch.zeros(_cc.BUFFER_WORDS, dtype=torch.int64, device=f"cuda:{index}")
            _buffers[index] = buf
        return buf


def buffer_address(device: Union[None, int, str, torch.device] = None) -> int:
    """The failure buffer's device address (what torch.compile's generated checks write to)."""
    return failures(device).data_ptr()


def take_failures(device: Union[None, int, str, torch.device] = None) -> list:
    """Synchronises the device(s), decodes and clears their records; never raises for them."""
    with _lock:
        devices = list(_buffers) if device is None else [_device_index(device)]
        found = []
        for index in devices:
            buf = _buffers.get(index)
            if buf is None:
                continue
            torch.cuda.synchronize(index)
            counts = buf[:_cc.MAX_SITES].tolist()
            if not any(counts):
                continue
            records = buf[_cc.MAX_SITES:].tolist()
            buf.zero_()
            torch.cuda.synchronize(index)
            found += _cc.decode(counts, records, device=index)
        return found


def raise_failures(device: Union[None, int, str, torch.device] = None) -> None:
    """What ``tensordiag.check()`` runs: raises ``tensordiag.DeviceAssertionError`` (the report)
    for the checks that failed since the last check on every device (or on ``device``);
    synchronises those devices first."""
    found = take_failures(device)
    if found:
        raise _cc.make_error(found)


def site(description: str = "") -> tl.constexpr:
    """A new site id, a ``tl.constexpr`` to bind to a module global and pass to one check;
    ``jit`` fills in the kernel, file and line from the kernel's source."""
    sid = _cc.SITES.reserve()
    if description:
        _cc.SITES.fill(sid, _cc.Site(sid, "check", description, "<unregistered kernel>",
                                     message=description))
    return tl.constexpr(sid)


def jit(fn: Optional[Callable[..., Any]] = None, **kwargs: Any) -> Any:
    """``triton.jit`` that also registers the sites of the kernel's checks (kernel name, file,
    line, the call's text) so that reports name them. ``@jit`` or ``@jit(**triton_kwargs)``."""

    def wrap(f: Callable[..., Any]) -> Any:
        _cc.register_kernel_sites(f, f.__name__)
        return triton.jit(f, **kwargs)

    return wrap(fn) if fn is not None else wrap


# --- device side ------------------------------------------------------------------------------

@triton.jit
def _record(bad, a, b, failures, SITE: tl.constexpr):
    """Counts each failing element at SITE; the first failure since the last check writes the
    record. Only failing lanes touch memory."""
    badb = bad | tl.zeros([1], tl.int1)           # a block of at least one dimension
    z = tl.zeros(badb.shape, tl.int64)
    old = tl.atomic_add(failures + SITE + z, z + 1, mask=badb, sem="relaxed")
    first = badb & (old == 0)
    rec = failures + _MAX_SITES + SITE * _WORDS + z
    zf = z.to(tl.float64)
    tl.store(rec + 0, (z + a).to(tl.int64), mask=first)
    tl.store(rec + 1, (zf + a).to(tl.int64, bitcast=True), mask=first)
    tl.store(rec + 2, (z + b).to(tl.int64), mask=first)
    tl.store(rec + 3, (zf + b).to(tl.int64, bitcast=True), mask=first)
    tl.store(rec + 4, z + tl.program_id(0), mask=first)
    tl.store(rec + 5, z + tl.program_id(1), mask=first)
    tl.store(rec + 6, z + tl.program_id(2), mask=first)
    tl.store(rec + 7, z + tl.reshape(tl.arange(0, badb.numel), badb.shape), mask=first)
    tl.store(rec + 8, z + tl.num_programs(0), mask=first)
    tl.store(rec + 9, z + tl.num_programs(1), mask=first)
    tl.store(rec + 10, z + tl.num_programs(2), mask=first)


@triton.jit
def check_index(index, size, failures, site: tl.constexpr, mask):
    """True where ``0 <= index < size``; records the elements of ``mask`` where it is not.
    Guard the access with it: ``tl.load(p + index, mask=mask & ok)``."""
    ok = (index >= 0) & (index < size)
    _record((~ok) & mask, index, size, failures, site)
    return ok


@triton.jit
def check(cond, a, b, failures, site: tl.constexpr, mask):
    """``cond`` (True where it holds); records the elements of ``mask`` where it does not,
    with the values ``a`` and ``b`` (ints or floats) in the report."""
    _record((~cond) & mask, a, b, failures, site)
    return cond


@triton.jit
def _inductor_index(index, ok, size, mask, SITE: tl.constexpr, ADDRESS: tl.constexpr):
    """torch.compile's bounds check: records where ``ok`` fails under ``mask`` and returns the
    index with the failing elements replaced by 0, so that the access stays in bounds."""
    failures = tl.full([], ADDRESS, tl.int64).to(tl.pointer_type(tl.int64))
    _record((~ok) & mask, index, size, failures, SITE)
    return tl.where(ok, index, 0)


@triton.jit
def _inductor_assert(cond, SITE: tl.constexpr, ADDRESS: tl.constexpr):
    """torch.compile's ``_assert_async`` and friends: records where ``cond`` fails."""
    failures = tl.full([], ADDRESS, tl.int64).to(tl.pointer_type(tl.int64))
    _record(~cond, 0, 0, failures, SITE)


__all__ = ["check_index", "check", "site", "jit", "failures", "buffer_address", "take_failures",
           "raise_failures"]
