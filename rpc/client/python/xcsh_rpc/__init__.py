"""xcsh_rpc: typed clients for `xcsh --mode rpc`, standard library only.

RpcClient (threads) and AsyncRpcClient (asyncio) have the same method set, the pi family's
RpcClient in snake_case plus host tools and extension UI dialogs (docs/client.md, "Python").
The frame types come from protocol.py, which `xcsh schema --format python` generates.
"""

from ._core import ClientClosed, RpcError
from .aio import AsyncRpcClient
from .client import HostTool, HostToolContext, RpcClient
from .protocol import (
    PROTOCOL_VERSION,
    SCHEMA_HASH,
    AgentEvent,
    ExtensionUiRequest,
    ExtensionUiResponse,
    RpcCommand,
    RpcResponse,
)

#: The version of this client package.
__version__ = "0.1.0"

__all__ = [
    "AgentEvent",
    "AsyncRpcClient",
    "ClientClosed",
    "ExtensionUiRequest",
    "ExtensionUiResponse",
    "HostTool",
    "HostToolContext",
    "PROTOCOL_VERSION",
    "RpcClient",
    "RpcCommand",
    "RpcError",
    "RpcResponse",
    "SCHEMA_HASH",
    "__version__",
]
