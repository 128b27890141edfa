"""The execution loop's runtime features: slash commands, observations after a failed action, the
state machine, memory, call timeouts, and companion-to-companion messages under the seed's rules
on a manual clock. The brain and the simulated body are the real nodes; they meet on the
in-process transport (the same decode-and-validate path as the broker's), since the broker is
not what these tests are about (tests/test_bus*.py and tests/e2e/ keep it real)."""

from __future__ import annotations

import queue
import threading
import time

import pytest
from brain_rig import BrainRig

from body_drivers.node import ActionFailure
from edge.brain.clock import ManualClock
from edge.brain import prompt
from edge.brain.loop import CompanionBrain
from edge.config import COMPANIONS_DIR, DEFAULT_COMPANION
from edge.protocol.action_codes import ActionCode
from edge.protocol.companion import load_companion
from edge.protocol.payloads import Action, CompanionMessage, Estop, Perception, Reply
from edge.providers.scripted import ScriptedProvider
from edge.runtime.local import LocalHub


@pytest.fixture
def pip():
    return load_companion(DEFAULT_COMPANION)


@pytest.fixture
def rig(pip):
    """(brain factory, the test's client, what the client saw by type, the simulated body); the
    client's ``hub.settle()`` returns once every message sent so far was handled."""
    made = BrainRig(pip, (Action, Reply, CompanionMessage))
    yield made.brain, made.client, made.seen, made.sim
    made.close()


def wait(pred, timeout=10.0):
    deadline = time.time() + timeout
    while not pred():
        assert time.time() < deadline, "timed out"
        time.sleep(0.02)


def settled(hub: LocalHub, *brains: CompanionBrain, timeout: float = 20.0) -> None:
    """Wait until no message is on its way or in a handler and every brain is idle. Checked
    twice around the brains: a brain that is idle with nothing in flight can start nothing more
    (time moves only when the test advances the manual clock)."""
    wait(lambda: hub.settle(0) and all(b.idle() for b in brains) and hub.settle(0), timeout=timeout)


def drain(q: queue.Queue) -> list:
    out = []
    while not q.empty():
        out.append(q.get())
    return out


def test_slash_commands_bypass_the_llm(rig, pip):
    brain, client, seen, sim = rig
    provider = ScriptedProvider([])
    b = brain(provider)
    for text in ["/look 0 1 1", "/look x=0.5 y=0 z=1", '/move {"x": 0.2, "y": 0.1, "z": 0}', "/speak it's a nice day",
                 "/help", "/fly", "/look 5 0 0", "/nod many"]:
        client.publish(Perception(title="input", body=text, sender="tester"))
    wait(lambda: b.handled == 8)
    replies = [seen[Reply].get(timeout=2) for _ in range(8)]
    actions = drain(seen[Action])
    assert [(a.name, a.params) for a in actions] == [
        ("look", {"x": 0, "y": 1, "z": 1}), ("look", {"x": 0.5, "y": 0, "z": 1}),
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

    def overheated(action, cancel):   # what the brain cannot foresee: the body fails the action
        raise ActionFailure(ActionCode.SERVO_FAULT, "nod: the neck servo is too hot")
    sim._handlers["nod"] = overheated
    provider = ScriptedProvider([{"action": "nod", "params": {"times": 1}}, {"none": True}])
    b = brain(provider)
    client.publish(Perception(title="input", body="Do you agree?"))
    wait(lambda: b.handled == 1)
    assert len(provider.calls) == 2
    observation = provider.calls[1][0]
    assert observation.startswith("Observation:") and "servo_fault" in observation and "too hot" in observation


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
    shown = len(prompt.example_turns(pip))            # the file's worked examples come first, always
    assert shown > 0 and history[:shown] == prompt.example_turns(pip)
    recent = history[shown:]
    assert [m.role for m in recent] == ["user", "assistant", "user", "assistant"]
    assert "turn 1" in recent[0].content and "turn 2" in recent[2].content
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
        settled(client.hub, a, b)
        before = len(a.messaging.sent) + len(b.messaging.sent)
        clock.advance(10.0)   # due sends go out inside advance()
        settled(client.hub, a, b)
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
    settled(client.hub, b)   # the two before it were dropped on arrival, none is left on its way
    assert len(provider.calls) == 1 and "hello everyone" in provider.calls[0][0]


class Gate:
    """A provider whose calls wait at a gate until the test opens it, like a model that takes
    long to decide; it answers from a script and, like the embedded model, ignores a cancel."""

    def __init__(self, script: list[dict], loop: bool = False):
        self.inner = ScriptedProvider(script, loop=loop)
        self.name = "gate"
        self.calls = self.inner.calls
        self.entered = threading.Event()
        self.open = threading.Event()

    def generate(self, prompt, context):
        self.entered.set()
        assert self.open.wait(30), "the test never opened the gate"
        return self.inner.generate(prompt, context)

    def close(self) -> None:
        self.open.set()


def events_of(b, *kinds) -> list:
    return [(k, d) for k, d in list(b.events) if k in kinds]


def blocked_turn(brain, client, gate: Gate, **config):
    """A brain whose first turn is inside the provider, waiting at the gate."""
    b = brain(gate, **config)
    client.publish(Perception(title="input", body="what do you see?"))
    assert gate.entered.wait(10)
    return b


@pytest.mark.parametrize("said_queue_size", [32, 4])
def test_what_a_person_says_during_a_turn_is_all_handled_afterwards(rig, said_queue_size):
    brain, client, seen, sim = rig
    gate = Gate([{"none": True}], loop=True)
    b = blocked_turn(brain, client, gate, said_queue_size=said_queue_size)
    said = [f"I was thinking about the weather, note {i}" for i in range(20)]
    for text in said:
        client.publish(Perception(title="input", body=text))
    wait(lambda: len(events_of(b, "queued", "coalesced")) == 20)
    gate.open.set()
    wait(lambda: b.idle())
    prompts = "\n".join(p for p, _ in gate.calls)
    assert all(text in prompts for text in said)           # none lost
    placed = [k for k, _ in events_of(b, "queued", "coalesced")]
    assert placed == ["queued"] * min(20, said_queue_size) + ["coalesced"] * max(0, 20 - said_queue_size)
    assert len(gate.calls) == 1 + min(20, said_queue_size) and b.dropped == 0


def test_a_sensor_keeps_only_its_newest_view_while_the_brain_is_busy(rig):
    brain, client, seen, sim = rig
    gate = Gate([{"none": True}], loop=True)
    b = blocked_turn(brain, client, gate)
    views = [Perception(title="vision", format="object", body={"objects": []}) for _ in range(6)]
    for view in views:
        client.publish(view)
    wait(lambda: len(events_of(b, "queued", "coalesced")) == 6)
    gate.open.set()
    wait(lambda: b.idle())
    handled = [d["perception"]["id"] for _, d in events_of(b, "perception")]
    assert len(gate.calls) == 2 and handled[1:] == [views[-1].id]   # only the newest view was decided on
    assert [k for k, _ in events_of(b, "queued", "coalesced")] == ["queued"] + ["coalesced"] * 5


def test_a_slash_command_acts_while_a_turn_is_deciding(rig):
    brain, client, seen, sim = rig
    gate = Gate([{"none": True}])
    b = blocked_turn(brain, client, gate)
    client.publish(Perception(title="input", body="/nod 1", sender="tester"))
    action = seen[Action].get(timeout=10)
    reply = seen[Reply].get(timeout=10)
    assert (action.name, action.params) == ("nod", {"times": 1}) and reply.text == "/nod: done"
    assert not gate.open.is_set() and b.busy                # the turn is still waiting for its decision
    gate.open.set()
    wait(lambda: b.idle())


def test_estop_cancels_the_turn_in_flight_and_holds_new_ones_until_released(rig):
    brain, client, seen, sim = rig
    gate = Gate([{"action": "nod", "params": {"times": 3}}, {"action": "wag", "params": {"speed": 1}}])
    b = blocked_turn(brain, client, gate)
    client.publish(Estop(sender="tester", engaged=True))
    wait(lambda: events_of(b, "estop"))
    gate.open.set()                                         # the decision arrives after the estop
    wait(lambda: b.handled == 1)
    errors = [d["error"] for _, d in events_of(b, "provider_error")]
    assert [e["code"] for e in errors] == ["E4002"] and "emergency stop" in errors[0]["message"]
    client.publish(Perception(title="input", body="and now the other thing"))
    wait(lambda: events_of(b, "queued"))
    assert events_of(b, "queued")[0][1]["held"] and len(gate.calls) == 1 and not b.idle()
    client.publish(Estop(sender="tester", engaged=False))
    action = seen[Action].get(timeout=10)
    wait(lambda: b.idle())
    assert (action.name, action.params) == ("wag", {"speed": 1})  # the held input, after the release
    assert drain(seen[Action]) == [] and len(gate.calls) == 2      # the cancelled nod was never sent
    engaged = [d for _, d in events_of(b, "estop")]
    assert [(d["engaged"], d["turn_cancelled"]) for d in engaged] == [(True, True), (False, False)]


def test_estop_refuses_actions_without_sending_them(rig):
    brain, client, seen, sim = rig
    b = brain(ScriptedProvider([]))
    client.publish(Estop(sender="tester", engaged=True))
    wait(lambda: b.estop_engaged)
    client.publish(Perception(title="input", body="/nod 2", sender="tester"))
    reply = seen[Reply].get(timeout=10)
    assert not reply.ok and "estop_engaged" in reply.text and seen[Action].empty()
    client.publish(Estop(sender="tester", engaged=False))
    wait(lambda: not b.estop_engaged)
    client.publish(Perception(title="input", body="/nod 2", sender="tester"))
    assert seen[Action].get(timeout=10).params == {"times": 2}


def test_a_redelivered_perception_is_decided_once(rig):
    """QoS 1 may deliver twice (a broker restart before the PUBACK): the robot must not answer twice."""
    brain, client, seen, sim = rig
    provider = ScriptedProvider([{"action": "speak", "params": {"message": "Hello!"}}], loop=True)
    b = brain(provider)
    perception = Perception(title="input", body="hello there")
    client.publish(perception)
    client.publish(perception)                                   # the same id again
    client.publish(Perception(title="input", body="and again"))  # a new id: decided
    spoken = [seen[Action].get(timeout=10).params["message"] for _ in range(2)]
    wait(lambda: b.handled == 2)
    assert spoken == ["Hello!", "Hello!"] and len(provider.calls) == 2 and b.handled == 2
    assert [c[0] for c in provider.calls][0].endswith("hello there")
