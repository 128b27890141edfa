"""The execution loop's runtime features on a real broker: slash commands, observations after a
failed action, the state machine, memory, call timeouts, and companion-to-companion messages
under the seed's rules on a manual clock."""

from __future__ import annotations

import queue
import time

import pytest

from body_drivers.node import BodyNode
from body_drivers.sim import SimBody, SimConfig
from edge.brain.clock import ManualClock
from edge.brain.loop import BrainConfig, CompanionBrain
from edge.bus import Bus
from edge.config import COMPANIONS_DIR, DEFAULT_COMPANION
from edge.protocol.companion import load_companion
from edge.protocol.payloads import Action, CompanionMessage, Estop, Perception, Reply
from edge.providers.scripted import ScriptedProvider


@pytest.fixture
def pip():
    return load_companion(DEFAULT_COMPANION)


@pytest.fixture
def rig(broker, pip):
    sim = SimBody(config=SimConfig(move_speed=10, look_speed=10, gesture_s=0.0))
    body_bus = Bus("body", "body", broker.address).connect()
    body = BodyNode(body_bus, sim, [pip]).start()
    client = Bus("client", "test", broker.address).connect()
    seen: dict[type, queue.Queue] = {t: queue.Queue() for t in (Action, Reply, CompanionMessage)}
    for t, q in seen.items():
        client.subscribe(t, q.put)
    made = []

    def brain(provider, companion=None, clock=None, peers=None, **config) -> CompanionBrain:
        companion = companion or pip
        bus = Bus(f"brain-{companion.id}", "brain", broker.address).connect()
        events: list = []
        b = CompanionBrain(companion, provider, bus, BrainConfig(**config), lambda k, d: events.append((k, d)),
                           clock=clock, peers=peers).start()
        b.events = events
        made.append((b, bus))
        time.sleep(0.2)
        return b

    yield brain, client, seen, sim
    for b, bus in made:
        b.stop()
        bus.close()
    body.stop()
    body_bus.close()
    client.close()


def wait(pred, timeout=10.0):
    deadline = time.time() + timeout
    while not pred():
        assert time.time() < deadline, "timed out"
        time.sleep(0.02)


def drain(q: queue.Queue) -> list:
    out = []
    while not q.empty():
        out.append(q.get())
    return out


def test_slash_commands_bypass_the_llm(rig, pip):
    brain, client, seen, sim = rig
    provider = ScriptedProvider([])
    b = brain(provider)
    for text in ["/look 0 1 0", "/look x=0.5 y=0 z=1", '/move {"x": 0.2, "y": 0.1, "z": 0}', "/speak it's a nice day",
                 "/help", "/fly", "/look 5 0 0", "/nod many"]:
        client.publish(Perception(title="input", body=text, sender="tester"))
    wait(lambda: b.handled == 8)
    replies = [seen[Reply].get(timeout=2) for _ in range(8)]
    actions = drain(seen[Action])
    assert [(a.name, a.params) for a in actions] == [
        ("look", {"x": 0, "y": 1, "z": 0}), ("look", {"x": 0.5, "y": 0, "z": 1}),
        ("move", {"x": 0.2, "y": 0.1, "z": 0}), ("speak", {"message": "it's a nice day"})]
    assert [r.ok for r in replies] == [True] * 5 + [False] * 3
    assert all(r.to == "tester" and r.sender == pip.id for r in replies)
    assert "/look x:number y:number z:number" in replies[4].text and "/speak message:string" in replies[4].text
    assert "unknown command /fly" in replies[5].text and "/speak" in replies[5].text
    assert "/x" in replies[6].text and "maximum" in replies[6].text
    assert "times must be an integer" in replies[7].text
    assert provider.calls == []
    assert sim.pose.gaze == pytest.approx((0.5, 0, 1))


def test_failed_action_goes_back_as_an_observation(rig):
    brain, client, seen, sim = rig
    client.publish(Estop(sender="test", engaged=True))
    provider = ScriptedProvider([{"action": "look", "params": {"x": 0.5, "y": 0, "z": 1}}, {"none": True}])
    b = brain(provider)
    client.publish(Perception(title="input", body="look at the door on the right"))
    wait(lambda: b.handled == 1)
    assert len(provider.calls) == 2
    observation = provider.calls[1][0]
    assert observation.startswith("Observation:") and "estop_engaged" in observation
    client.publish(Estop(sender="test", engaged=False))


def test_state_machine_walks_a_turn(rig):
    brain, client, seen, sim = rig
    b = brain(ScriptedProvider([{"action": "nod", "params": {"times": 1}}]))
    client.publish(Perception(title="input", body="do you agree?"))
    wait(lambda: b.handled == 1)
    states = [d["state"] for k, d in b.events if k == "state"]
    assert states == ["assembling_context", "awaiting_llm", "executing_actions", "awaiting_results", "waiting"]


def test_memory_window_keeps_recent_turns_and_the_rules(rig, pip):
    brain, client, seen, sim = rig
    provider = ScriptedProvider([{"none": True}], loop=True)
    b = brain(provider, memory_messages=4)
    for i in range(4):
        client.publish(Perception(title="input", body=f"turn {i}"))
        wait(lambda: b.handled == i + 1)
    history = provider.calls[3][1].history
    assert [m.role for m in history] == ["user", "assistant", "user", "assistant"]
    assert "turn 1" in history[0].content and "turn 2" in history[2].content
    assert pip.personality in provider.calls[3][1].system


def test_call_timeout_is_an_e3003_and_the_loop_goes_on(rig):
    brain, client, seen, sim = rig
    provider = ScriptedProvider([{"none": True}], delay_s=1.0, loop=True)
    b = brain(provider, call_timeout_s=0.2)
    client.publish(Perception(title="input", body="hello"))
    client.publish(Perception(title="input", body="again"))
    wait(lambda: b.handled == 2)
    errors = [d["error"]["code"] for k, d in b.events if k == "provider_error"]
    assert errors == ["E3003", "E3003"]


def test_two_companions_converse_under_the_seed_rules(rig, pip):
    brain, client, seen, sim = rig
    mai = load_companion(COMPANIONS_DIR / "azabu-mai.json")
    clock = ManualClock()
    peers = lambda: [pip.metadata_json()["metadata"], mai.metadata_json()["metadata"]]  # noqa: E731
    a = brain(ScriptedProvider([{"action": "send_message", "params": {"to": mai.id, "message": "Hi Mai!"}}], loop=True),
              companion=pip, clock=clock, peers=peers)
    b = brain(ScriptedProvider([{"action": "send_message", "params": {"to": pip.id, "message": "こんにちは"}}], loop=True),
              companion=mai, clock=clock, peers=peers)
    client.publish(Perception(title="input", body="Say hi to Mai", to=pip.id))
    quiet = 0
    while quiet < 3:
        wait(lambda: a.idle() and b.idle(), timeout=20)
        time.sleep(0.3)
        before = len(a.messaging.sent) + len(b.messaging.sent)
        clock.advance(10.0)
        time.sleep(0.3)
        wait(lambda: a.idle() and b.idle(), timeout=20)
        quiet = quiet + 1 if len(a.messaging.sent) + len(b.messaging.sent) == before else 0
    wire = drain(seen[CompanionMessage])
    assert 2 <= len(wire) <= 15
    for brain_ in (a, b):
        times = [t for t, _ in brain_.messaging.sent]
        assert all(t2 - t1 >= 10.0 for t1, t2 in zip(times, times[1:])), times
    conv_a = a.messaging.conversation_with(mai.id)
    conv_b = b.messaging.conversation_with(pip.id)
    assert conv_a.closed or conv_b.closed
    assert max(conv_a.exchanges, conv_b.exchanges) == 15
    # the other companion's metadata reached the prompt, and replies were offered as a tool
    prompt_a, context_a = a.provider.calls[-1]
    assert "麻布麻衣" in context_a.system
    assert any(t.name == "send_message" for t in context_a.tools)


def test_messages_for_others_and_own_messages_are_not_handled(rig, pip):
    brain, client, seen, sim = rig
    provider = ScriptedProvider([{"none": True}], loop=True)
    b = brain(provider)
    client.publish(CompanionMessage(sender="someone", to="another-companion", message="not for pip"))
    client.publish(CompanionMessage(sender=pip.id, to="all", message="my own echo"))
    client.publish(CompanionMessage(sender="someone", to="all", message="hello everyone"))
    wait(lambda: b.handled == 1)
    time.sleep(0.3)
    assert len(provider.calls) == 1 and "hello everyone" in provider.calls[0][0]
