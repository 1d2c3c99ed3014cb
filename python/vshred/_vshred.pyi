# The native module's types, for what the package hands out as it is (the
# rest is called through `vshred/__init__.py`, which is typed).
from typing import Any, Mapping, Optional

import pyarrow as pa

__version__: str

class VshredError(Exception):
    """An error of vshred: bad input, a file that cannot be read or written,
    a usage error. Its message says where (file, line, row, path)."""

class Session:
    def __init__(self, settings: Optional[Mapping[str, Any]] = None) -> None: ...
    def register(self, name: str, source: Any) -> None: ...
    def sql(self, query: str) -> pa.Table: ...

def __getattr__(name: str) -> Any: ...
