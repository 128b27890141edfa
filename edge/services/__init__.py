"""The HTTP-facing services, each a node on the bus with a port of its own: ``gateway`` (the
single-server seed's HTTP/WebSocket face), ``registry`` (companion metadata) and ``mcp_server``
(a companion's actions as MCP tools); each has a ``serve``. ``http_server`` runs them under uvicorn.
"""
