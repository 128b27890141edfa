"""The node runtime every node shares: a transport (MQTT or in-process), the guard that decodes
and validates each message and survives every failure, and the ``Node`` base (docs/nodes.md).

Public: ``transport.Transport`` (what a node needs), ``bus.Bus`` (MQTT) and ``local.LocalHub``
(in-process), ``node.Node``, ``broker`` (find or start Mosquitto), ``action_client``, ``worker``,
``signals.stop_on_signals``.
"""
