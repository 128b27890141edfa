"""companion-edge: an AI companion's nodes on a small robot computer, talking over MQTT.

Outside code uses the ``companion`` command (``edge.cli``) and the wire contract
(docs/protocol.md); inside, ``app.Stack`` starts the nodes that ``nodes`` builds, in the order
of the node-kind table (``kinds``). The packages: ``nodes`` (one module per node kind and the
lifecycle they share), ``runtime`` (a node's transport and life), ``protocol`` (the wire's
payloads and companion files), ``brain``, ``perception`` (camera and microphone nodes),
``providers`` (the LLM backends), ``services`` (gateway, registry, MCP server), ``models``
(model files). Each package's ``__init__`` says what it is for and which modules outside code
uses, and imports nothing heavy (``models`` alone hands on names from its modules).
"""
