"""A client without a persistent session must subscribe again after every reconnect.

A persistent session keeps its subscriptions in the broker across a restart, so it cannot
tell whether the bus resubscribes. A clean-session client (a tool, a gateway) loses them with
the session: if the bus subscribed only on its first connect, it would stay connected and
hear nothing. The retained estop is the witness: the broker sends it on each new SUBSCRIBE,
so its second arrival proves the subscription was made again, with no sleep guessing when.
"""

from __future__ import annotations

import queue

from edge.runtime.bus import Bus
from edge.protocol.payloads import Estop


def test_a_clean_session_client_resubscribes_after_a_broker_restart(broker):
    heard: queue.Queue[Estop] = queue.Queue()
    listener = Bus("listener", "test", broker.address, persistent=False, announce=False).connect()
    operator = Bus("operator", "test", broker.address, announce=False).connect()
    try:
        listener.subscribe(Estop, heard.put)
        operator.publish(Estop(sender="operator", engaged=True)).wait_for_publish(5)
        assert heard.get(timeout=5).engaged is True            # live, or retained on SUBSCRIBE

        broker.stop()                                           # the broker forgets the clean session
        broker.start()
        again = heard.get(timeout=30)                           # retained: only a new SUBSCRIBE sends it
        assert again.engaged is True and listener.connects == 2

        operator.publish(Estop(sender="operator", engaged=False))   # and live messages flow again
        assert heard.get(timeout=30).engaged is False
        assert heard.empty()
    finally:
        listener.close()
        operator.close()
