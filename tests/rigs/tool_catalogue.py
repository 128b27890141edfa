"""A home robot's ~40 actions (and 10 written in Japanese) for the retrieval tests and bench."""

from __future__ import annotations

from edge.providers.base import Tool


def _tool(tool_name: str, description: str, **params: str | dict) -> Tool:
    props = {k: (v if isinstance(v, dict) else {"type": "string", "description": v}) for k, v in params.items()}
    return Tool(tool_name, description, {"type": "object", "properties": props, "required": list(props)})


_SPEED = {"type": "number", "minimum": 0, "maximum": 1, "description": "0 is slow, 1 is fast."}

ACTIONS = [
    _tool("wave_hand", "Wave a hand to greet someone or say goodbye.", hand={"type": "string", "enum": ["left", "right"]}),
    _tool("nod_head", "Nod the head to agree or say yes.", times={"type": "integer", "minimum": 1, "maximum": 3}),
    _tool("shake_head", "Shake the head to disagree or say no."),
    _tool("bow", "Bow politely to thank someone or apologise."),
    _tool("play_music", "Play a song or some music through the speaker.", genre="Kind of music, e.g. jazz."),
    _tool("stop_music", "Stop the music that is playing."),
    _tool("set_volume", "Change how loud the speaker is.", level={"type": "integer", "minimum": 0, "maximum": 10}),
    _tool("turn_on_light", "Switch on the room light or the desk lamp.", room="Which room."),
    _tool("turn_off_light", "Switch off the room light or the desk lamp.", room="Which room."),
    _tool("dim_light", "Make the light dimmer or brighter.", brightness=_SPEED),
    _tool("set_light_color", "Change the colour of the LED strip.", color="A colour name such as red."),
    _tool("speak", "Say something out loud.", message="What to say."),
    _tool("look_at", "Turn the head to look at a point.", x=_SPEED, y=_SPEED),
    _tool("move_to", "Drive to a spot on the floor, in metres.", x=_SPEED, y=_SPEED),
    _tool("turn_around", "Spin around on the spot."),
    _tool("follow_person", "Follow the person in front of the camera.", person_id="Who to follow."),
    _tool("stop_moving", "Stop all motion at once and hold still."),
    _tool("dance", "Dance to the beat for a few seconds.", style={"type": "string", "enum": ["robot", "disco", "waltz"]}),
    _tool("take_photo", "Take a picture with the camera.", flash={"type": "boolean", "description": "Use the flash."}),
    _tool("start_recording", "Start recording a video clip."),
    _tool("stop_recording", "Stop recording the video clip."),
    _tool("set_timer", "Start a countdown timer.", minutes={"type": "integer", "minimum": 1}),
    _tool("set_alarm", "Set an alarm to ring at a time of day.", time="HH:MM, 24-hour clock."),
    _tool("cancel_alarm", "Cancel the alarm that is set."),
    _tool("tell_time", "Say what time it is now."),
    _tool("tell_weather", "Say what the weather forecast is.", city="Which city."),
    _tool("tell_joke", "Tell a short funny joke."),
    _tool("read_news", "Read out today's news headlines."),
    _tool("open_door", "Unlock and open the front door."),
    _tool("close_curtains", "Draw the curtains closed."),
    _tool("open_curtains", "Open the curtains to let daylight in."),
    _tool("set_thermostat", "Set the heating or cooling temperature.", celsius={"type": "number", "minimum": 10}),
    _tool("start_vacuum", "Start the robot vacuum cleaner."),
    _tool("water_plants", "Water the plants on the balcony."),
    _tool("feed_pet", "Give the cat or dog some food from the feeder."),
    _tool("wag_tail", "Wag the tail to show joy.", speed=_SPEED),
    _tool("blink_eyes", "Blink the eye LEDs."),
    _tool("show_emotion", "Show a feeling on the face display.",
          emotion={"type": "string", "enum": ["happy", "sad", "angry", "surprised", "sleepy"]}),
    _tool("go_to_sleep", "Rest in sleep mode until woken up."),
    _tool("charge_battery", "Go back to the dock and charge the battery."),
]

JAPANESE = [
    _tool("move", "今いる位置から見て (x, y, z) だけ移動します。", x=_SPEED),
    _tool("look", "座標 (x, y, z) の方向を注視します。", x=_SPEED),
    _tool("speak", "相手に向かって言葉を発します。", message="話す内容"),
    _tool("turn_on_light", "部屋の照明（電気）をつけます。"),
    _tool("turn_off_light", "部屋の照明（電気）を消します。"),
    _tool("play_music", "スピーカーで音楽を再生します。"),
    _tool("take_photo", "カメラで写真を撮ります。"),
    _tool("set_alarm", "指定した時刻にアラームを鳴らします。"),
    _tool("gesture", "身振りで気持ちを表します。",
          name={"type": "string", "enum": ["nod", "bow", "wave"], "description": "うなずく、お辞儀、手を振る"}),
    _tool("go_to_sleep", "スリープモードで休みます。"),
]


def _action(title: str, description: str, **params: dict) -> dict:
    return {"title": title, "description": description, "type": "object", "properties": params,
            "required": list(params), "additionalProperties": False}


_UNIT = {"type": "number", "minimum": -1, "maximum": 1}
# Pip's five actions plus 26 more, written as a companion author would: what each one is for.
HOME_ACTIONS = [
    _action("lights_on", "Turn the room lights on."),
    _action("lights_off", "Turn the room lights off."),
    _action("dim_lights", "Set how bright the room lights are.",
            level={"type": "number", "minimum": 0, "maximum": 1, "description": "0 is dark, 1 is full brightness."}),
    _action("take_photo", "Take a photo with the camera."),
    _action("record_video", "Record a short video with the camera.",
            seconds={"type": "integer", "minimum": 1, "maximum": 60, "description": "How long to record."}),
    _action("report_time", "Tell the current time."),
    _action("report_weather", "Tell today's weather forecast."),
    _action("play_music", "Play music through the speaker.",
            genre={"type": "string", "maxLength": 30, "description": "Kind of music, e.g. jazz."}),
    _action("stop_music", "Stop the music."),
    _action("set_volume", "Set the speaker volume.", level={"type": "integer", "minimum": 0, "maximum": 10}),
    _action("dance", "Dance for a few seconds."),
    _action("set_timer", "Start a countdown timer.", minutes={"type": "integer", "minimum": 1, "maximum": 120}),
    _action("set_alarm", "Set an alarm for a time of day.",
            time={"type": "string", "pattern": "^[0-2][0-9]:[0-5][0-9]$", "description": "HH:MM, 24-hour clock."}),
    _action("tell_joke", "Tell a joke."),
    _action("read_news", "Read the news headlines."),
    _action("open_curtains", "Open the curtains."),
    _action("close_curtains", "Close the curtains."),
    _action("set_temperature", "Set the heating or air conditioning temperature.",
            celsius={"type": "number", "minimum": 10, "maximum": 30}),
    _action("start_vacuum", "Start the vacuum cleaner."),
    _action("water_plants", "Water the plants."),
    _action("feed_pet", "Give the pet food from the feeder."),
    _action("show_face", "Show a face on the display.",
            mood={"type": "string", "enum": ["happy", "sad", "angry", "surprised", "sleepy"]}),
    _action("sleep", "Go to sleep until woken up."),
    _action("charge", "Go back to the dock to charge the battery."),
    _action("follow_person", "Follow the person in front of the camera."),
    _action("spin", "Spin around on the spot.", x=_UNIT),
]


def home_companion(pip_doc: dict) -> dict:
    """Pip with 31 actions, all offered by one ``input`` event (the case where retrieval has to
    trim an event's own actions)."""
    doc = {**pip_doc, "name": "Hearth", "actions": [*pip_doc["actions"], *HOME_ACTIONS]}
    every = [a["title"] for a in doc["actions"]]
    doc["events"] = [{"perception": "input", "action": every, "condition": "The user says something."}]
    return doc
