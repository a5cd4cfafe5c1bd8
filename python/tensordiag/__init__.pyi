# SPDX-FileCopyrightText: 2026 tensordiag contributors
# SPDX-License-Identifier: Apache-2.0
from typing import Optional, Sequence

from . import dtensor as dtensor
from . import fr as fr
from . import report as report
from . import trace as trace
from .errors import DeviceAssertionError as DeviceAssertionError
from .errors import Error as Error
from .errors import InputError as InputError
from .errors import ShardingError as ShardingError

__version__: str

def check() -> None: ...
def main(args: Optional[Sequence[str]] = ...) -> int: ...
def get_include() -> str: ...
def get_cmake_dir() -> str: ...
def get_library_dir() -> str: ...
