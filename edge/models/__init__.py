"""Model files for the device: the manifest, where they land, fetching and checking them.

``companion models list`` / ``companion models fetch NAME`` (``edge.models.cli``) are built
on these plain functions:

- ``load_manifest(path=None)`` reads and validates ``models/manifest.toml``;
- ``default_models_dir()`` is where downloads land (``$COMPANION_MODELS_DIR`` or
  ``~/.local/share/companion-edge/models``), ``Store(dir)`` that folder and its state;
- ``fetch_model(entry, store, ...)`` (``edge.models.fetch``) downloads with resume and sha256
  checks, pulls through Ollama, or checks a package-shipped model;
- ``list_models(manifest, store)`` says what is installed, where, and whether it verifies.

``find_model_file(rel)`` lets a loader (the YOLO detector, a recognizer) look a relative name
up in the models folder. This package hands these names on from its modules; importing it loads
no model library.
"""

from __future__ import annotations

from edge.models.errors import ChecksumError, FetchError
from edge.models.manifest import Manifest, ManifestError, ModelEntry, ModelFile, load_manifest
from edge.models.status import ModelStatus, list_models
from edge.models.store import Store, default_models_dir, find_model_file

__all__ = ["ChecksumError", "FetchError", "Manifest", "ManifestError", "ModelEntry", "ModelFile", "ModelStatus",
           "Store", "default_models_dir", "find_model_file", "list_models", "load_manifest"]
