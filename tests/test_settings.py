"""empathy.settings: the remembered data sets (0600 file), saved uploads and the validation of a URL's data set."""

from __future__ import annotations

import json
import stat

import pytest

from empathy.settings import (
    MAX_RECENT,
    Settings,
    default_settings_path,
    load_upload,
    resolve_key,
    safe_upload_name,
    save_upload,
    source_key,
)

PATH_SOURCE = {"kind": "path", "outputs": "/data/run1/outputs.csv", "ratings": ["/data/run1/ratings_a.csv"]}


def _mode(path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.mark.parametrize(("source", "key"), [
    ({"kind": "demo"}, "demo"),
    ({"kind": "kumar2025", "directory": "/x"}, "kumar2025"),
    ({"kind": "upload", "name": "o.csv", "saved": "0123456789abcdef"}, "upload:0123456789abcdef"),
    (PATH_SOURCE, "/data/run1/outputs.csv"),
])
def test_source_key(source, key):
    assert source_key(source) == key


@pytest.mark.parametrize("source", [{"kind": "upload", "name": "o.csv"}, {"kind": "ftp"}])
def test_source_key_refuses(source):
    with pytest.raises(ValueError):
        source_key(source)


def test_default_path(monkeypatch, tmp_path):
    monkeypatch.delenv("EMPATHY_SETTINGS", raising=False)
    assert default_settings_path(tmp_path) == tmp_path / "app-settings.json"
    monkeypatch.setenv("EMPATHY_SETTINGS", str(tmp_path / "elsewhere.json"))
    assert default_settings_path(tmp_path) == tmp_path / "elsewhere.json"


def test_remember_is_private_newest_first_and_bounded(tmp_path):
    path = tmp_path / "fresh" / "app-settings.json"
    settings = Settings.load(path)
    assert settings.recent == [] and settings.last() is None
    settings.remember(PATH_SOURCE)
    assert _mode(path) == 0o600 and _mode(path.parent) == 0o700
    settings.remember({"kind": "demo"})
    settings.remember({**PATH_SOURCE, "ratings": []})  # the same key again: moved first, updated, not doubled
    again = Settings.load(path)
    assert [source_key(s) for s in again.recent] == ["/data/run1/outputs.csv", "demo"]
    assert again.last() == {**PATH_SOURCE, "ratings": []}
    assert again.find("demo") == {"kind": "demo"} and again.find("/nowhere") is None
    for index in range(MAX_RECENT + 5):
        again.remember({"kind": "path", "outputs": f"/d/{index}.csv", "ratings": []})
    assert len(Settings.load(path).recent) == MAX_RECENT
    assert Settings.load(path).last()["outputs"] == f"/d/{MAX_RECENT + 4}.csv"


@pytest.mark.parametrize("content", ["", "not json", "[1, 2]", '{"recent": "x"}',
                                     '{"recent": [{"kind": "path"}, {"kind": "upload", "saved": "../../etc"}]}'])
def test_a_malformed_file_reads_as_empty(tmp_path, content):
    path = tmp_path / "app-settings.json"
    path.write_text(content, encoding="utf-8")
    assert Settings.load(path).recent == []


def test_malformed_entries_are_dropped_good_ones_kept(tmp_path):
    path = tmp_path / "app-settings.json"
    path.write_text(json.dumps({"recent": [{"kind": "path", "outputs": 3}, PATH_SOURCE, "demo"]}), encoding="utf-8")
    assert Settings.load(path).recent == [PATH_SOURCE]


def test_remember_refuses_a_non_source(tmp_path):
    with pytest.raises(ValueError, match="not a data source"):
        Settings.load(tmp_path / "s.json").remember({"kind": "path"})


@pytest.mark.parametrize(("name", "safe"), [
    ("outputs.csv", "outputs.csv"), ("../../etc/passwd", "passwd"), ("C:\\x\\my file.csv", "my_file.csv"),
    ("..", "file"), ("=cmd|x.csv", "cmd_x.csv"),
])
def test_safe_upload_name(name, safe):
    assert safe_upload_name(name) == safe


def test_save_and_load_an_upload(tmp_path):
    uploads = tmp_path / "uploads"
    outputs = ("../my outputs.csv", b"item_id,model,reference,generation\n1,m,a,b\n")
    ratings = [("ratings.csv", b"item_id,model,rater,dimension,value\n1,m,j,ca,1\n")]
    digest = save_upload(uploads, outputs, ratings)
    assert len(digest) == 16 and int(digest, 16) >= 0
    assert save_upload(uploads, outputs, ratings) == digest  # the same files: the same folder
    assert save_upload(uploads, outputs, []) != digest
    folder = uploads / digest
    assert _mode(uploads) == 0o700 and _mode(folder) == 0o700
    assert sorted(p.name for p in folder.iterdir()) == ["0-my_outputs.csv", "1-ratings.csv", "manifest.json"]
    assert all(_mode(p) == 0o600 for p in folder.iterdir())
    saved = load_upload(uploads, digest)
    assert saved == {"name": "../my outputs.csv", "outputs": outputs, "ratings": ratings}


def test_a_manifest_cannot_point_outside_its_folder(tmp_path):
    uploads = tmp_path / "uploads"
    digest = save_upload(uploads, ("o.csv", b"x"), [])
    (tmp_path / "secret.csv").write_text("secret", encoding="utf-8")
    (uploads / digest / "manifest.json").write_text(json.dumps(
        {"name": "o.csv", "outputs": {"name": "o.csv", "file": "../../secret.csv"}, "ratings": []}), encoding="utf-8")
    with pytest.raises(ValueError, match="malformed upload manifest"):
        load_upload(uploads, digest)
    with pytest.raises(ValueError, match="malformed upload digest"):
        load_upload(uploads, "../" + digest)


def test_resolve_key(tmp_path):
    uploads = tmp_path / "uploads"
    digest = save_upload(uploads, ("o.csv", b"x"), [])
    settings = Settings.load(tmp_path / "s.json")
    settings.remember(PATH_SOURCE)
    kumar = tmp_path / "kumar"

    def resolve(key, kumar_directory=kumar):
        return resolve_key(key, settings, uploads, kumar_directory=kumar_directory)

    assert resolve("demo").source == {"kind": "demo"}
    assert resolve("kumar2025").source == {"kind": "kumar2025", "directory": str(kumar)}
    assert "absent" in resolve("kumar2025", None).error
    assert resolve(f"upload:{digest}").source == {"kind": "upload", "name": "o.csv", "saved": digest}
    assert "not saved" in resolve("upload:ffffffffffffffff").error
    assert "malformed" in resolve("upload:../../x").error
    # a remembered path opens with the ratings it had; any other path is only offered, never read
    assert resolve("/data/run1/outputs.csv").source == PATH_SOURCE
    unknown = resolve("/etc/passwd")
    assert unknown.source is None and unknown.unconfirmed == "/etc/passwd"
    for bad in ("", "a\nb", "x\x00", "y" * 5000):
        assert resolve(bad).error == "the link's data set is not a valid name"


def test_save_leaves_no_temporary_file_and_replaces_atomically(tmp_path):
    path = tmp_path / "app-settings.json"
    first, second = Settings.load(path), Settings.load(path)
    first.remember(PATH_SOURCE)
    second.remember({"kind": "demo"})  # a second session writing its own list: the last write wins whole
    assert Settings.load(path).recent == [{"kind": "demo"}]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["app-settings.json"]
    assert _mode(path) == 0o600


def test_an_unwritable_place_raises_oserror(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("", encoding="utf-8")  # a file where the settings folder should be: fails even as root
    with pytest.raises(OSError):
        Settings.load(blocker / "app-settings.json").remember(PATH_SOURCE)
    assert Settings.load(blocker / "app-settings.json").recent == []


def test_the_annotator_name_is_remembered_and_checked(tmp_path):
    from empathy.settings import MAX_ANNOTATOR, clean_annotator

    path = tmp_path / "app-settings.json"
    settings = Settings.load(path)
    assert settings.annotator == ""
    settings.remember({"kind": "demo"})
    settings.remember_annotator("  alice  ")
    again = Settings.load(path)
    assert again.annotator == "alice" and [source_key(s) for s in again.recent] == ["demo"]
    again.remember({"kind": "demo"})  # remembering a data set keeps the name
    assert Settings.load(path).annotator == "alice"
    for bad, message in (("a\nb", "control characters"), ("x" * (MAX_ANNOTATOR + 1), "at most"), (3, "is text")):
        with pytest.raises(ValueError, match=message):
            clean_annotator(bad)
    path.write_text(json.dumps({"recent": [], "annotator": "a\x00b"}), encoding="utf-8")
    assert Settings.load(path).annotator == ""  # a malformed name reads as none
    Settings.load(path).remember_annotator("")
    assert Settings.load(path).annotator == ""
