# PLACEHOLDER: replaced by xcsh schema output (`xcsh schema --format python`).
#
# Until the generator lands this file is written by hand. It exports exactly the names the
# generator promises (PROTOCOL_VERSION, SCHEMA_HASH, RpcCommand, RpcResponse, AgentEvent,
# ExtensionUiRequest, ExtensionUiResponse); the rest of the package imports only these names,
# so the generated file replaces it without a change elsewhere. The types are deliberately
# loose: the wire contract is docs/rpc.md.
"""The frame types of the xcsh RPC protocol (placeholder until generated)."""

from typing import Any, Literal, NotRequired, TypedDict

#: The protocol version this client was built against ("" until the schema names one).
PROTOCOL_VERSION: str = ""

#: The hash of the schema this client was built against ("" until the schema names one).
SCHEMA_HASH: str = ""

#: A command the host writes on the agent's stdin: an object with a literal "type".
RpcCommand = dict[str, Any]


class RpcResponse(TypedDict):
    """The agent's answer to a command."""

    type: Literal["response"]
    command: str
    success: bool
    id: NotRequired[Any]
    data: NotRequired[Any]
    error: NotRequired[str]
    code: NotRequired[str]


#: Any frame the agent writes that is not a response: run events, host tool frames, UI requests.
AgentEvent = dict[str, Any]


class ExtensionUiRequest(TypedDict):
    """A dialog or notification an extension (or a confirmation policy) asks the host to show."""

    type: Literal["extension_ui_request"]
    id: str
    method: Literal[
        "select", "confirm", "input", "editor", "cancel",
        "notify", "setStatus", "setWidget", "setTitle", "set_editor_text",
    ]
    title: NotRequired[str]
    options: NotRequired[list[str]]
    message: NotRequired[str]
    placeholder: NotRequired[str]
    prefill: NotRequired[str]
    timeout: NotRequired[int]
    targetId: NotRequired[str]
    notifyType: NotRequired[Literal["info", "warning", "error"]]
    statusKey: NotRequired[str]
    statusText: NotRequired[str]
    widgetKey: NotRequired[str]
    widgetLines: NotRequired[list[str]]
    widgetPlacement: NotRequired[Literal["aboveEditor", "belowEditor"]]
    text: NotRequired[str]


class ExtensionUiResponse(TypedDict):
    """The host's answer to a dialog: value (select, input, editor), confirmed, or cancelled."""

    type: Literal["extension_ui_response"]
    id: str
    value: NotRequired[str]
    confirmed: NotRequired[bool]
    cancelled: NotRequired[bool]
    timedOut: NotRequired[bool]


__all__ = [
    "PROTOCOL_VERSION",
    "SCHEMA_HASH",
    "RpcCommand",
    "RpcResponse",
    "AgentEvent",
    "ExtensionUiRequest",
    "ExtensionUiResponse",
]
