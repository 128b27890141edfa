"""The node runtime every node shares: a transport (MQTT or in-process), the guard that decodes
and validates each message and survives every failure, and the ``Node`` base (docs/nodes.md)."""
