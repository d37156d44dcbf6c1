"""The app's memory of data sets: recently opened sources, saved uploads and the data-set link of a URL.

A data set chosen on the Data page is named in the page's URL (``?data=...``, see :func:`source_key`), so a
reload reopens it, and listed in a small settings file (``$EMPATHY_SETTINGS``, else ``app-settings.json`` in
the cache folder; mode 0600 like the caches, :mod:`empathy.cachefiles`), so a new tab can offer it again.
Uploaded files are copied into ``uploads/<digest>/`` beside it (folder 0700, files 0600) so they can be
reopened after the browser session ends. Overrides need no memory of their own: they live in the store under
the data set's stable name, so reopening the data set reopens them. Without a login, the annotator name committed
in the app is kept there too (:attr:`Settings.annotator`), so a reload does not forget who is deciding.

A URL is untrusted (anyone can send a link): :func:`resolve_key` opens only the bundled demo, the Kumar et
al. (2025) import, a saved upload named by its digest, or a path this machine's settings file lists as
opened before; any other path is returned as *unconfirmed*, for the app to ask before reading it.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from empathy.cachefiles import FILE_MODE, ensure_private_directory, ensure_private_file
from empathy.identifiers import person_name_problem

__all__ = [
    "MAX_RECENT",
    "SETTINGS_ENV",
    "Resolved",
    "Settings",
    "clean_annotator",
    "default_settings_path",
    "load_upload",
    "resolve_key",
    "safe_upload_name",
    "save_upload",
    "source_key",
]

#: Environment variable naming the settings file.
SETTINGS_ENV = "EMPATHY_SETTINGS"
#: How many data sets the settings file remembers (newest first).
MAX_RECENT = 10
_DIGEST = re.compile(r"^[0-9a-f]{16}$")
_KINDS = ("demo", "path", "upload", "kumar2025")
#: The longest annotator name the settings file keeps.
MAX_ANNOTATOR = 200


def clean_annotator(name: object) -> str:
    """An annotator name as the settings file keeps it: stripped; ``ValueError`` for a non-string, a name with a
    control character or one longer than :data:`MAX_ANNOTATOR` characters."""
    if not isinstance(name, str):
        raise ValueError(f"an annotator name is text, got {type(name).__name__}")
    cleaned = name.strip()
    if len(cleaned) > MAX_ANNOTATOR:
        raise ValueError(f"an annotator name has at most {MAX_ANNOTATOR} characters, got {len(cleaned)}")
    problem = person_name_problem(cleaned)
    if problem is not None:
        raise ValueError(problem)
    return cleaned


def default_settings_path(cache_dir: Path) -> Path:
    """``$EMPATHY_SETTINGS``, else ``<cache_dir>/app-settings.json``."""
    named = os.environ.get(SETTINGS_ENV, "").strip()
    return Path(named).expanduser() if named else cache_dir / "app-settings.json"


def source_key(source: dict) -> str:
    """The URL value naming a source: ``demo``, ``kumar2025``, ``upload:<digest>`` or the outputs path.

    Raises
    ------
    ValueError
        For a source of an unknown kind, or an upload that was not saved (it cannot be named).
    """
    kind = source.get("kind")
    if kind in ("demo", "kumar2025"):
        return str(kind)
    if kind == "upload":
        digest = source.get("saved")
        if not isinstance(digest, str) or not _DIGEST.match(digest):
            raise ValueError("an upload is named by the digest of its saved copy; this one was not saved")
        return f"upload:{digest}"
    if kind == "path":
        return str(source["outputs"])
    raise ValueError(f"unknown data source kind {kind!r}")


def _valid_source(entry: object) -> dict | None:
    """``entry`` when it is a well-formed source dict (from the settings file), else ``None``."""
    if not isinstance(entry, dict) or entry.get("kind") not in _KINDS:
        return None
    kind = entry["kind"]
    if kind == "path":
        ratings = entry.get("ratings", [])
        if not isinstance(entry.get("outputs"), str) or not isinstance(ratings, list) \
                or not all(isinstance(r, str) for r in ratings):
            return None
    if kind == "upload" and not (isinstance(entry.get("saved"), str) and _DIGEST.match(entry["saved"])
                                 and isinstance(entry.get("name"), str)):
        return None
    if kind == "kumar2025" and not isinstance(entry.get("directory"), str):
        return None
    return entry


@dataclass
class Settings:
    """The settings file: the recently opened sources, newest first, and the annotator name last committed.

    A missing, unreadable or malformed file reads as empty (it is only a convenience; nothing is lost but
    the list), and entries that are not well-formed sources are dropped, as is a malformed annotator name.
    """

    path: Path
    recent: list[dict]
    annotator: str = ""

    @classmethod
    def load(cls, path: Path) -> Settings:
        """Read ``path`` (empty settings when it is absent or malformed)."""
        try:
            raw = json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return cls(Path(path), [])
        entries = raw.get("recent", []) if isinstance(raw, dict) else []
        recent = [e for e in (_valid_source(e) for e in entries if isinstance(entries, list)) if e is not None]
        try:
            annotator = clean_annotator(raw.get("annotator", "")) if isinstance(raw, dict) else ""
        except ValueError:
            annotator = ""
        return cls(Path(path), recent[:MAX_RECENT], annotator)

    def save(self) -> None:
        """Write the file (created 0600, its folder 0700 when created here), replacing it atomically."""
        ensure_private_directory(self.path.parent)
        # A temporary file of its own per call (mkstemp creates it 0600): two sessions of one app process
        # saving at once never write into the same file; the last replace wins.
        descriptor, name = tempfile.mkstemp(dir=self.path.parent, prefix=f".{self.path.name}.", suffix=".tmp")
        try:
            with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
                handle.write(json.dumps({"version": 1, "recent": self.recent, "annotator": self.annotator},
                                        indent=1))
            os.chmod(name, FILE_MODE)
            os.replace(name, self.path)
        except BaseException:
            Path(name).unlink(missing_ok=True)
            raise

    def remember(self, source: dict) -> None:
        """Put ``source`` first (once: an earlier entry with the same key is dropped) and save."""
        if _valid_source(source) is None:
            raise ValueError(f"not a data source: {source!r}")
        key = source_key(source)
        self.recent = [source, *(e for e in self.recent if source_key(e) != key)][:MAX_RECENT]
        self.save()

    def remember_annotator(self, name: str) -> None:
        """Keep ``name`` as the annotator of the next session (``""`` forgets it) and save; ``ValueError`` for a
        name :func:`clean_annotator` refuses."""
        self.annotator = clean_annotator(name)
        self.save()

    def last(self) -> dict | None:
        """The most recently opened source, if any."""
        return self.recent[0] if self.recent else None

    def find(self, key: str) -> dict | None:
        """The remembered source whose :func:`source_key` is ``key``."""
        return next((e for e in self.recent if source_key(e) == key), None)


@dataclass(frozen=True)
class Resolved:
    """What a URL's ``data`` value names: a source to open, or a path to confirm first, or an error."""

    source: dict | None = None
    unconfirmed: str | None = None
    error: str | None = None


def resolve_key(key: str, settings: Settings, uploads_dir: Path, *, kumar_directory: Path | None) -> Resolved:
    """Turn a URL's ``data`` value into a source, never opening a path this machine has not opened before.

    ``demo`` is the bundled demo; ``kumar2025`` the Kumar import when its folder is present; ``upload:<16 hex
    digits>`` a saved upload whose manifest exists; any other value a path, opened only when the settings
    list it (with the ratings files it had), else returned as ``unconfirmed``. Control characters and
    overlong values are refused.
    """
    if not isinstance(key, str) or not key or len(key) > 4096 or any(ord(c) < 32 or ord(c) == 127 for c in key):
        return Resolved(error="the link's data set is not a valid name")
    if key == "demo":
        return Resolved(source={"kind": "demo"})
    if key == "kumar2025":
        if kumar_directory is None:
            return Resolved(error="the link names the Kumar et al. (2025) import, whose folder is absent here")
        return Resolved(source={"kind": "kumar2025", "directory": str(kumar_directory)})
    if key.startswith("upload:"):
        digest = key.removeprefix("upload:")
        if not _DIGEST.match(digest):
            return Resolved(error="the link names an upload by a malformed digest")
        try:
            manifest = load_upload(uploads_dir, digest)
        except (OSError, ValueError):
            return Resolved(error="the link names an upload that is not saved on this machine")
        return Resolved(source={"kind": "upload", "name": manifest["name"], "saved": digest})
    known = settings.find(key)
    if known is not None:
        return Resolved(source=known)
    return Resolved(unconfirmed=key)


def safe_upload_name(name: str) -> str:
    """An uploaded file's name reduced to a safe file name (its last part; letters, digits, ``._-``)."""
    base = re.split(r"[\\/]", name)[-1]
    cleaned = re.sub(r"[^A-Za-z0-9_.-]+", "_", base).strip("._")
    return cleaned or "file"


def save_upload(uploads_dir: Path, outputs: tuple[str, bytes], ratings: Sequence[tuple[str, bytes]]) -> str:
    """Copy uploaded files (name, bytes) to ``uploads_dir/<digest>/``; return the digest.

    The digest is the first 16 hex digits of a SHA-256 over the names and contents, so saving the same files
    again reuses the folder. Files are 0600 and the folders 0700; the file names are reduced with
    :func:`safe_upload_name` and numbered, so a name can neither leave the folder nor collide. A
    ``manifest.json`` keeps the original names.
    """
    digest = hashlib.sha256()
    for name, content in [outputs, *ratings]:
        digest.update(len(name.encode()).to_bytes(8, "big") + name.encode())
        digest.update(len(content).to_bytes(8, "big") + content)
    key = digest.hexdigest()[:16]
    folder = uploads_dir / key
    ensure_private_directory(uploads_dir)
    ensure_private_directory(folder)
    stored = []
    for position, (name, content) in enumerate([outputs, *ratings]):
        target = folder / f"{position}-{safe_upload_name(name)}"
        ensure_private_file(target)
        target.write_bytes(content)
        stored.append({"name": name, "file": target.name})
    manifest = folder / "manifest.json"
    ensure_private_file(manifest)
    manifest.write_text(json.dumps({"name": outputs[0], "outputs": stored[0], "ratings": stored[1:]}),
                        encoding="utf-8")
    return key


def load_upload(uploads_dir: Path, digest: str) -> dict:
    """The manifest of a saved upload with the files' bytes: ``{"name", "outputs": (name, bytes),
    "ratings": [(name, bytes), ...]}``.

    Raises
    ------
    ValueError
        For a malformed digest or manifest, or a manifest naming a file outside its folder.
    OSError
        When the folder or a file is missing.
    """
    if not _DIGEST.match(digest):
        raise ValueError(f"malformed upload digest {digest!r}")
    folder = uploads_dir / digest
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))

    def read(entry: object) -> tuple[str, bytes]:
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str) \
                or not isinstance(entry.get("file"), str) or entry["file"] != safe_upload_name(entry["file"]):
            raise ValueError(f"malformed upload manifest in {folder}")
        return entry["name"], (folder / entry["file"]).read_bytes()

    if not isinstance(manifest, dict) or not isinstance(manifest.get("ratings"), list) \
            or not isinstance(manifest.get("name"), str):
        raise ValueError(f"malformed upload manifest in {folder}")
    return {"name": manifest["name"], "outputs": read(manifest.get("outputs")),
            "ratings": [read(entry) for entry in manifest["ratings"]]}
