# SPDX-FileCopyrightText: 2026 tensordiag contributors
# SPDX-License-Identifier: Apache-2.0
import os
from contextlib import AbstractContextManager
from typing import Any, Dict, Iterable, List, Optional, TextIO, Union

import torch
from torch.distributed.tensor import DTensor

from ..report import Report

class Recording:
    path: Optional[str]
    records: List[Dict[str, Any]]
    def to_jsonl(self) -> str: ...
    def save(self, path: Optional[str] = ...) -> str: ...
    def check(self) -> Any: ...
    def __len__(self) -> int: ...

def record_dtensor(path: Union[str, os.PathLike[str], None] = ..., *,
                   explain: bool = ...) -> AbstractContextManager[Recording]: ...
def explain_errors() -> AbstractContextManager[None]: ...

class OomWatch:
    directory: str
    top: int
    events: List[Dict[str, Any]]
    errors: List[str]
    active: bool
    def stop(self) -> None: ...
    def __enter__(self) -> OomWatch: ...
    def __exit__(self, *exc: Any) -> None: ...

def watch_oom(directory: Union[str, os.PathLike[str]] = ..., *, top: int = ...,
              max_entries: int = ..., stream: Optional[TextIO] = ...) -> OomWatch: ...
def check_replicas(module_or_tensors: Union[torch.nn.Module, DTensor, Dict[str, DTensor],
                                            Iterable[DTensor]],
                   group: Any = ..., *, nonfinite: bool = ...) -> Report: ...
def check_shards(dtensor_or_tensors: Union[torch.nn.Module, DTensor, Dict[str, DTensor],
                                           Iterable[DTensor]],
                 group: Any = ...) -> Report: ...
