"""The node-kind table says what each node reads: a stack of every kind, on the in-process hub,
subscribes exactly the topics of each row (the ACL is made from them: a topic the table forgets
would be refused by the LAN broker, one it adds for nothing would be granted for nothing)."""

from __future__ import annotations

from edge.app import Stack
from edge.config import Settings, load_toml
from edge.kinds import BY_NAME, NAMES, NODE_ID_KINDS, kind
from edge.protocol.payloads import Status
from edge.providers.scripted import ScriptedProvider
from edge.runtime.local import LocalHub
from every_kind import every_kind_toml


def test_each_node_subscribes_the_topics_of_its_row(tmp_path):
    config = every_kind_toml(tmp_path)
    hub = LocalHub()
    made: dict[str, list] = {}

    def transport(node_id, kind, namespace=None, **options):
        connection = hub.transport(node_id, kind, namespace, **options)
        made.setdefault(kind, []).append(connection)
        return connection

    stack = Stack(load_toml(config), provider=ScriptedProvider([{"none": True}], loop=True), speaker=None,
                  transport=transport, start_broker=False)
    with stack:
        assert hub.settle()
        assert set(made) == set(NAMES)
        for name, connections in made.items():   # a threaded node (mic, camera) connects when its thread gets there
            assert all(connection.wait_connected(60) for connection in connections), name
        for name, connections in made.items():
            wanted = {p.topic_pattern(None) for p in kind(name).subscribes}
            if name == "body":   # status/+ is the servo body's safety monitor's (a simulated body has none)
                wanted.discard(Status.topic_pattern(None))
            for connection in connections:
                assert {pattern for pattern, _ in connection.guard.patterns()} == wanted, name
        # the nodes that are ready once started are online on the hub, under their own status topic
        for name in ("body", "brain", "mcp", "gateway"):   # the registry announces itself later, by itself
            for connection in made[name]:
                status = hub.retained(Status(node=connection.node_id, kind=name, state="online").topic())
                assert status and b'"online"' in status, name


def test_the_node_id_rule_is_the_rows():
    assert NODE_ID_KINDS == ("body", "mcp", "gateway", "camera", "mic")
    assert [BY_NAME[n].default_id for n in ("body", "brain", "registry")] == ["body", "brain-<companion id>",
                                                                             "registry"]
    assert Settings().section("camera") == BY_NAME["camera"].section()
