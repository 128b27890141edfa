"""Whether the words heard so far already make a finished sentence.

The end of a turn is normally 0.3 s of silence. When the recognizer, started at the first
pause (``SegmenterConfig.pause_s``), has already written a sentence that is finished ("Look to
your left.", "What time is it?") the node need not wait that long: it ends the turn after
``SegmenterConfig.finished_silence_s`` instead. A sentence that trails off ("I want to...",
"Can you pass me the", "And then, um") is not finished, and the turn waits for the full silence,
so the person can go on. Recognizers that write punctuation (Whisper, Moonshine) end finished
sentences with a stop; one that writes none (pocketsphinx) never ends a turn early.
"""

from __future__ import annotations

import re

# Words a sentence does not end on: articles, conjunctions, possessives, hesitations. (Not
# prepositions, pronouns or auxiliaries: "Where are you from?", "How are you?", "Yes, I do."
# end on them.)
CONTINUES = frozenset("a an the and or but because if than my your our their its um uh er erm hmm".split())

_WORD = re.compile(r"[a-z']+")


def sounds_finished(text: str) -> bool:
    """True for a sentence that ends with a full stop, a question or an exclamation mark and
    not on a word that leads on, nor with an ellipsis."""
    said = text.strip().rstrip("\"'”’)")
    if not said or said.endswith(("...", "…")) or said[-1] not in ".?!":
        return False
    words = _WORD.findall(said.lower())
    return bool(words) and words[-1] not in CONTINUES
