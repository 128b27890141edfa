"""The simulated body: results for every action, rejections named, estop, timeline. On the
in-process transport (the same decode-and-validate path as the broker's): the broker is not what
these tests are about (tests/test_bus*.py, test_servo_body.py and tests/e2e/ keep it real)."""

from __future__ import annotations

import copy
import json
import queue
import threading
import time

import pytest

from body_drivers.sim import SimConfig
from edge.app import Stack
from edge.config import DEFAULT_COMPANION, Settings
from edge.protocol.action_names import SPEECH_ACTIONS
from edge.protocol.companion import load_companion, parse_companion
from edge.protocol.payloads import Action, ActionResult, Estop, VoiceActivity
from edge.runtime.local import LocalHub


@pytest.fixture
def pip():
    return load_companion(DEFAULT_COMPANION)


@pytest.fixture
def hub():
    return LocalHub()


def body_stack(hub: LocalHub, body_id: str, companions, tmp_path, speaker=None) -> Stack:
    """``companion run body`` on the hub: the simulator and the body's node, timeline in tmp_path."""
    settings = Settings(sim=True, timeline=tmp_path / "timeline.jsonl", body_id=body_id)
    stack = Stack(settings, speaker=speaker, kinds=("body",), start_broker=False, transport=hub.transport,
                  companions=list(companions)).start()
    assert stack.buses[0].wait_subscribed(5)   # actions published from now on reach it
    return stack


@pytest.fixture
def body(hub, pip, tmp_path):
    stack = body_stack(hub, "body-test", [pip], tmp_path)
    stack.sim.config = SimConfig(move_speed=5.0, look_speed=5.0)
    yield stack.body, stack.sim
    stack.stop()


@pytest.fixture
def brain_bus(hub):
    bus = hub.transport("brain-test", "brain")
    results: queue.Queue = queue.Queue()
    bus.subscribe(ActionResult, results.put)
    bus.connect()
    assert bus.wait_subscribed(5)
    yield bus, results
    bus.close()


def _until(predicate, timeout: float = 5.0) -> None:
    """Wait for something the test can observe (a pose, a flag), failing after ``timeout``."""
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


def _result_for(results: queue.Queue, action_id: str, timeout: float = 5.0) -> ActionResult:
    deadline = time.time() + timeout
    while time.time() < deadline:
        r = results.get(timeout=max(0.01, deadline - time.time()))
        if r.id == action_id:
            return r
    raise AssertionError("no result")


def test_move_and_look_change_the_pose_and_report(body, brain_bus, pip, tmp_path):
    node, sim = body
    bus, results = brain_bus
    look = Action(name="look", params={"x": -0.5, "y": 0.25, "z": 1}, sender=pip.id)
    move = Action(name="move", params={"x": 0.3, "y": -0.2, "z": 0}, sender=pip.id)
    bus.publish(look)
    bus.publish(move)
    r1, r2 = _result_for(results, look.id), _result_for(results, move.id)
    assert r1.ok and r2.ok and r1.name == "look"
    assert r1.started <= r1.finished <= r2.started <= r2.finished   # one at a time, in order
    assert sim.pose.gaze == pytest.approx((-0.5, 0.25, 1.0))
    assert sim.pose.position == pytest.approx((0.3, -0.2, 0.0))
    lines = [json.loads(line) for line in (tmp_path / "timeline.jsonl").read_text().splitlines()]
    events = [(e["event"], e.get("name")) for e in lines]
    assert ("action.started", "look") in events and ("action.finished", "move") in events
    assert any(e["event"] == "position.reached" and e["at"] == [0.3, -0.2, 0.0] for e in lines)


@pytest.mark.parametrize("name, params, code, words", [
    ("fly", {}, "unknown_action", "fly"),
    ("look", {"x": 5, "y": 0, "z": 0}, "invalid_params", "/x"),
    ("speak", {"text": "wrong key"}, "invalid_params", "message"),
    ("wag", {"speed": "fast"}, "invalid_params", "/speed"),
])
def test_bad_actions_fail_with_a_named_reason(body, brain_bus, pip, name, params, code, words):
    node, sim = body
    bus, results = brain_bus
    action = Action(name=name, params=params, sender=pip.id)
    bus.publish(action)
    result = _result_for(results, action.id)
    assert not result.ok and result.error.code == code and words in result.error.message
    assert sim.pose.gaze == (0.0, 0.0, 1.0)  # nothing moved


def test_schema_violating_payload_gets_a_failed_result(body, brain_bus):
    bus, results = brain_bus
    bus.publish_raw("actions", json.dumps({"id": "abc-1", "from": "x", "name": "look", "params": 3, "ts": 1}).encode())
    result = _result_for(results, "abc-1")
    assert result.error.code == "invalid_payload" and "/params" in result.error.message


def test_duplicate_delivery_is_executed_once(body, brain_bus, pip):
    node, sim = body
    bus, results = brain_bus
    action = Action(name="nod", params={"times": 2}, sender=pip.id)
    marker = Action(name="look", params={"x": 0, "y": 0, "z": 1}, sender=pip.id)
    bus.publish(action)
    bus.publish(action)
    bus.publish(marker)          # one at a time, in order: a second nod would finish before it
    assert _result_for(results, action.id).ok
    assert results.get(timeout=5).id == marker.id
    assert [e["event"] for e in sim.timeline.events].count("gesture.done") == 1


def test_estop_halts_a_move_and_refuses_new_actions(body, brain_bus, pip):
    node, sim = body
    sim.config.move_speed = 0.2  # a 0.5 m move takes 2.5 s
    bus, results = brain_bus
    move = Action(name="move", params={"x": 0.5, "y": 0, "z": 0}, sender=pip.id)
    bus.publish(move)
    _until(lambda: sim.pose.position[0] > 0.02)      # under way
    bus.publish(Estop(sender="test", engaged=True))
    result = _result_for(results, move.id)
    assert not result.ok and result.error.code == "cancelled"
    halted_at = sim.pose.position[0]
    assert 0.0 < halted_at < 0.5
    refused = Action(name="look", params={"x": 0, "y": 0, "z": 1}, sender=pip.id)
    bus.publish(refused)
    assert _result_for(results, refused.id).error.code == "estop_engaged"
    # the move's result came once its motion had ended, so the pose is final by now
    assert sim.pose.position[0] == halted_at  # held where it stopped
    bus.publish(Estop(sender="test", engaged=False))
    _until(lambda: not node.estop_engaged)
    again = Action(name="look", params={"x": 0.1, "y": 0, "z": 1}, sender=pip.id)
    bus.publish(again)
    assert _result_for(results, again.id).ok
    # the body carries actions out one at a time, in order: had anything been left to move it
    # while held, it would have run before this look (a positive sync point, not a pause)
    assert sim.pose.position[0] == halted_at


def test_stop_cuts_the_current_action_and_drops_the_queue(body, brain_bus, pip):
    node, sim = body
    sim.config.move_speed = 0.2  # a 0.5 m move takes 2.5 s
    bus, results = brain_bus
    move = Action(name="move", params={"x": 0.5, "y": 0, "z": 0}, sender=pip.id)
    queued = Action(name="look", params={"x": 1, "y": 0, "z": 1}, sender=pip.id)
    stop = Action(name="stop", params={}, sender=pip.id)
    bus.publish(move)
    bus.publish(queued)
    _until(lambda: sim.pose.position[0] > 0.02)      # under way, the look waiting behind it
    bus.publish(stop)
    got: dict = {}
    deadline = time.time() + 5
    while len(got) < 3 and time.time() < deadline:
        r = results.get(timeout=5)
        got[r.id] = r
    assert got[stop.id].ok
    assert got[move.id].error.code == "cancelled" and got[queued.id].error.code == "cancelled"
    assert "stop" in got[queued.id].error.message
    assert 0.0 < sim.pose.position[0] < 0.5 and sim.pose.gaze == (0.0, 0.0, 1.0)
    after = Action(name="look", params={"x": 0.2, "y": 0, "z": 1}, sender=pip.id)
    bus.publish(after)
    assert _result_for(results, after.id).ok  # stop is not a latch: the body goes on afterwards


class HeldSpeaker:
    """A voice that plays until it is cut: ``playing`` is set while a sentence is under way."""

    def __init__(self) -> None:
        self.playing = threading.Event()

    def speak(self, text: str, cancel: threading.Event):
        self.playing.set()
        cut = cancel.wait(30)
        self.playing.clear()
        return type("Report", (), {"cancelled": cut, "seconds": 0.0})()


@pytest.mark.parametrize("name", SPEECH_ACTIONS)
def test_barge_in_cuts_every_speech_action_and_drops_the_speech_waiting(hub, pip, tmp_path, brain_bus, name):
    """``say`` is speech to the body as it is to the brain (edge/protocol/action_names.py): a
    person talking over it cuts it and drops the speech queued behind it; a motion queued goes on."""
    doc = copy.deepcopy(pip.source)
    speak = next(a for a in doc["actions"] if a["title"] == "speak")
    doc["actions"].append({**copy.deepcopy(speak), "title": "say"})
    companion = parse_companion(doc)
    speaker = HeldSpeaker()
    stack = body_stack(hub, "body-voice", [companion], tmp_path, speaker=speaker)
    node = stack.body
    client, results = brain_bus
    try:
        said = Action(name=name, params={"message": "Let me tell you a long story."}, sender=companion.id)
        waiting = Action(name=name, params={"message": "And another one."}, sender=companion.id)
        nod = Action(name="nod", params={"times": 1}, sender=companion.id)
        for action in (said, waiting, nod):
            client.publish(action)
        assert speaker.playing.wait(5)
        client.publish(VoiceActivity(sender="mic", onset=time.time(), event="started", over=[said.id]))
        got: dict = {}
        while len(got) < 3:
            r = results.get(timeout=5)
            got[r.id] = r
        cut, dropped, moved = got[said.id], got[waiting.id], got[nod.id]
        assert not cut.ok and cut.error.code == "interrupted" and "talked over" in cut.error.message
        assert not dropped.ok and dropped.error.code == "interrupted"
        assert moved.ok
        assert [e["id"] for e in node.timeline.events if e["event"] == "speech.interrupted"] == [said.id]
    finally:
        stack.stop()


class HeardSpeaker(HeldSpeaker):
    """A held voice that keeps what it was given to say."""

    def __init__(self) -> None:
        super().__init__()
        self.said: list[str] = []

    def speak(self, text: str, cancel: threading.Event):
        self.said.append(text)
        return super().speak(text, cancel)


def test_a_companions_own_voice_is_spoken_and_talked_over_like_speak(hub, pip, tmp_path, brain_bus):
    """A file whose voice is ``whisper`` with its words in ``ことば`` (no ``speak``): the body says
    those words, a person talking over it cuts it, and the speech waiting behind it is dropped."""
    doc = copy.deepcopy(pip.source)
    doc["actions"] = [a for a in doc["actions"] if a["title"] != "speak"] + [{
        "title": "whisper", "description": "Say something softly to the person, out loud.", "type": "object",
        "properties": {"ことば": {"type": "string", "minLength": 1}}, "required": ["ことば"]}]
    for event in doc["events"]:
        event["action"] = ["whisper" if a == "speak" else a for a in event["action"]]
    doc.pop("x-sentences", None)
    companion = parse_companion(doc)
    speaker = HeardSpeaker()
    stack = body_stack(hub, "body-whisper", [companion], tmp_path, speaker=speaker)
    client, results = brain_bus
    try:
        said = Action(name="whisper", params={"ことば": "おやすみなさい"}, sender=companion.id)
        waiting = Action(name="whisper", params={"ことば": "またあした"}, sender=companion.id)
        for action in (said, waiting):
            client.publish(action)
        assert speaker.playing.wait(5)
        assert speaker.said == ["おやすみなさい"]
        client.publish(VoiceActivity(sender="mic", onset=time.time(), event="started", over=[said.id]))
        got = {r.id: r for r in (results.get(timeout=5), results.get(timeout=5))}
        assert got[said.id].name == "whisper" and got[said.id].error.code == "interrupted"
        assert got[waiting.id].error.code == "interrupted" and speaker.said == ["おやすみなさい"]
    finally:
        stack.stop()
