"""Who may write, where the ledger lives, how it is printed and read (issue 24 items 1, 5 and 7, library part).

* roles: the roles file, and the store refusing a viewer's write or an annotator's adjudication (both backends);
* where a store lives: the uploads' store beside the uploads, never in the working directory; an old store found
  there is moved with a message; store files and their WAL are 0600;
* every DSN form masked (URL, libpq keyword form with quoted values, ``PGPASSWORD``);
* a read-only store opens for reading (SQLite ``mode=ro``; PostgreSQL read-only logins), and writes say so.
"""

from __future__ import annotations

import multiprocessing
import sqlite3
import stat
from pathlib import Path
from urllib.parse import parse_qsl, urlsplit

import pandas as pd
import pytest
from postgres_server import PASSWORD, select_only_login

from empathy.cli import main
from empathy.io import DataError
from empathy.labels.backends import open_store
from empathy.labels.locations import (
    StoreError,
    default_store_path,
    is_server_location,
    mask_location,
    parse_keyword_dsn,
    password_source,
    working_directory_store,
)
from empathy.labels.queue_state import assign, skip_output
from empathy.labels.records import Change
from empathy.labels.relocation import adopt_working_directory_store
from empathy.labels.roles import AccessDenied, load_roles, parse_roles, roles_from_mapping
from empathy.labels.sqlite import OverrideStore

DS = "ds"
ROLES_TOML = """\
default = "viewer"
viewers_see_hidden = false

[roles]
"Alice@Lab.example" = "annotator"
"bob@lab.example" = "adjudicator"
"carol@lab.example" = "viewer"
"""


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


# ------------------------------------------------------------------------------------------ roles

def test_the_roles_file_gives_each_identity_its_rights():
    roles = parse_roles(ROLES_TOML, source="roles.toml")
    assert roles.role_of(" alice@lab.example ") == "annotator"  # case and spaces do not matter
    assert roles.role_of("BOB@lab.example") == "adjudicator"
    assert roles.role_of("stranger@else.where") == "viewer"  # the default
    assert roles.role_of("") is None
    table = {(who, action): roles.allows(who, action) for who in ("alice@lab.example", "bob@lab.example",
                                                                   "carol@lab.example")
             for action in ("read", "decide", "adjudicate", "assign")}
    assert [k for k, allowed in table.items() if allowed] == [
        ("alice@lab.example", "read"), ("alice@lab.example", "decide"),
        ("bob@lab.example", "read"), ("bob@lab.example", "decide"), ("bob@lab.example", "adjudicate"),
        ("bob@lab.example", "assign"), ("carol@lab.example", "read")]
    assert [roles.may_see_hidden(w) for w in ("alice@lab.example", "carol@lab.example")] == [True, False]
    closed = roles_from_mapping({"default": "none", "viewers_see_hidden": True,
                                 "roles": {"carol@lab.example": "viewer"}}, source="secrets")
    assert closed.role_of("stranger") is None and not closed.allows("stranger", "read")
    assert closed.may_see_hidden("carol@lab.example") and not closed.may_see_hidden("stranger")


@pytest.mark.parametrize(("text", "fragments"), [
    ("[roles\n", ["roles.toml", "not valid TOML", "line 1"]),
    ('[roles]\n"alice" = "annotator"\n"dave" = "admin"\n', ["roles.toml", "row 3", "column 'roles.dave'",
                                                             "unknown role 'admin'"]),
    ('[roles]\nalice = 3\n', ["row 2", "column 'roles.alice'", "unknown role 3"]),
    ('admins = ["x"]\n[roles]\n', ["row 1", "column 'admins'", "unknown setting"]),
    ('default = "annotator"\n', ["no [roles] table"]),
    ('default = "boss"\n[roles]\n', ["row 1", "column 'default'", "unknown default role 'boss'"]),
    ('viewers_see_hidden = "yes"\n[roles]\n', ["column 'viewers_see_hidden'", "true or false"]),
    ('[roles]\n"Ann" = "viewer"\n"ann" = "annotator"\n', ["row 3", "listed twice", "also as 'Ann'"]),
    ('[roles]\n" " = "viewer"\n', ["empty identity"]),
])
def test_a_bad_roles_file_is_one_line_naming_file_line_and_key(tmp_path, text, fragments):
    path = tmp_path / "roles.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(DataError) as caught:
        load_roles(path)
    message = str(caught.value)
    assert "\n" not in message and message.startswith(str(path))
    for fragment in fragments:
        assert fragment in message, (fragment, message)


def test_a_missing_roles_file_is_named(tmp_path):
    with pytest.raises(DataError, match="none.toml: roles file not found"):
        load_roles(tmp_path / "none.toml")


def test_the_store_refuses_what_a_role_does_not_allow(store_location):
    roles = parse_roles(ROLES_TOML, source="roles.toml")
    store = open_store(store_location, roles=roles)
    store.set_override(DS, "i1", "m", "j", "ca", 1, annotator="alice@lab.example")
    with pytest.raises(AccessDenied) as caught:
        store.set_override(DS, "i1", "m", "j", "ca", 0, annotator="carol@lab.example")
    assert str(caught.value) == ("carol@lab.example is a viewer (roles.toml): only an annotator or above may write "
                                 "decisions; nothing was written")
    with pytest.raises(AccessDenied, match="alice@lab.example is an annotator .*only an adjudicator"):
        store.adjudicate(DS, [Change("i1", "m", "j", "ca", 0)], annotator="alice@lab.example")
    with pytest.raises(AccessDenied, match="stranger is a viewer"):
        store.write_batch([((DS, "alice@lab.example", "annotator"), Change("i2", "m", "j", "ca", 1)),
                           ((DS, "stranger", "annotator"), Change("i2", "m", "j", "ca", 0))], action="import")
    with pytest.raises(AccessDenied, match="carol"):
        store.confirm(DS, store.decisions(DS), {("i1", "m"): "h"}, annotator="carol@lab.example")
    with pytest.raises(AccessDenied, match="no identity given"):
        store.undo_last()
    with pytest.raises(AccessDenied, match="carol"):
        skip_output(store, DS, "i1", "m", "ca", annotator="carol@lab.example")
    with pytest.raises(AccessDenied, match="only an adjudicator or above may assign"):
        assign(store, DS, [("i1", "m")], ["alice@lab.example"], k=1, overlap=0, by="alice@lab.example")
    assert store.decisions(DS)[["annotator", "value"]].values.tolist() == [["alice@lab.example", 1.0]]
    assert len(store.audit(DS)) == 1  # nothing of the refused writes
    store.adjudicate(DS, [Change("i1", "m", "j", "ca", 0)], annotator="bob@lab.example")
    # an adjudication is undone by an adjudicator: not by bob once the file makes him an annotator
    demoted = open_store(store_location, roles=parse_roles(ROLES_TOML.replace('"adjudicator"', '"annotator"')))
    with pytest.raises(AccessDenied, match="bob@lab.example is an annotator .*only an adjudicator"):
        demoted.undo_last("bob@lab.example")
    assert store.undo_last("bob@lab.example")["action"].tolist() == ["adjudicate"]
    assert store.undo_last("alice@lab.example")["annotator"].tolist() == ["alice@lab.example"]  # her own, only
    # without roles (a single user's store) nothing is checked
    open_store(store_location).set_override(DS, "i1", "m", "j", "ca", 0, annotator="carol@lab.example")


def test_the_command_line_checks_the_identity_against_the_roles(tmp_path, monkeypatch, capsys):
    (tmp_path / "roles.toml").write_text(ROLES_TOML, encoding="utf-8")
    ledger = tmp_path / "l.csv"
    ledger.write_text("item_id,model,rater,dimension,value\ni1,m,j,ca,1\n", encoding="utf-8")
    store = tmp_path / "s.sqlite"
    monkeypatch.setenv("EMPATHY_ROLES", str(tmp_path / "roles.toml"))
    monkeypatch.setenv("EMPATHY_IDENTITY", "bob@lab.example")
    assert main(["store", "import", str(ledger), "--store", str(store), "--dataset", DS, "--annotator",
                 "bob@lab.example", "--allow-stale"]) == 0  # a ledger without text hashes
    assert main(["store", "import", str(ledger), "--store", str(store), "--dataset", DS, "--annotator",
                 "carol@lab.example", "--as", "carol@lab.example", "--allow-stale"]) == 2
    err = capsys.readouterr().err
    assert "carol@lab.example is a viewer" in err and err.count("\n") == 1
    assert OverrideStore(store).decisions(DS)["annotator"].tolist() == ["bob@lab.example"]


# ------------------------------------------------------------------------------------------ where stores live

def test_the_uploads_store_lives_with_the_uploads_whatever_the_working_directory(tmp_path, monkeypatch):
    monkeypatch.delenv("EMPATHY_STORE", raising=False)
    monkeypatch.setenv("EMPATHY_CACHE_DIR", str(tmp_path / "cache"))
    places = set()
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        monkeypatch.chdir(tmp_path / folder)
        places.add(default_store_path())
    assert places == {tmp_path / "cache" / "uploads" / "overrides.sqlite"}
    assert default_store_path(uploads_dir=tmp_path / "up") == tmp_path / "up" / "overrides.sqlite"
    assert default_store_path(tmp_path / "data") == tmp_path / "data" / ".empathy-overrides.sqlite"
    monkeypatch.setenv("EMPATHY_STORE", "~/team.sqlite")
    assert default_store_path() == Path.home() / "team.sqlite"
    monkeypatch.setenv("EMPATHY_STORE", "host=db dbname=team")
    assert default_store_path(uploads_dir=tmp_path) == "host=db dbname=team"


def _old_store(cwd: Path, annotators: tuple[str, ...] = ("ann",)) -> Path:
    old = working_directory_store(cwd)
    store = OverrideStore(old)
    for index, who in enumerate(annotators):
        store.set_override("upload:outputs.csv", f"i{index}", "m", "j", "ca", 1, annotator=who)
    skip_output(store, "upload:outputs.csv", "i9", "m", "ca", annotator="ann")
    return old


def test_an_old_store_in_the_working_directory_is_moved_with_a_message(tmp_path):
    old = _old_store(tmp_path / "started-here", ("ann", "bob"))
    before = OverrideStore(old)
    decisions, audit = before.decisions(), before.audit()
    target = tmp_path / "uploads" / "overrides.sqlite"
    result = adopt_working_directory_store(target, cwd=tmp_path / "started-here")
    assert result is not None and result.moved and result.decisions == 2
    assert str(old) in result.message and str(target) in result.message and "kept as" in result.message
    after = OverrideStore(target)
    pd.testing.assert_frame_equal(after.decisions(), decisions)
    pd.testing.assert_frame_equal(after.audit(), audit)
    assert len(after.fetch("SELECT * FROM skips")) == 1
    assert not old.exists() and Path(f"{old}.moved").is_file()  # kept, renamed: never found again
    assert _mode(target) == 0o600 and _mode(target.parent) == 0o700
    assert adopt_working_directory_store(target, cwd=tmp_path / "started-here") is None


def test_two_stores_are_both_kept_and_named(tmp_path):
    old = _old_store(tmp_path / "cwd")
    target = tmp_path / "uploads" / "overrides.sqlite"
    OverrideStore(target).set_override("upload:other.csv", "x", "m", "j", "ca", 0, annotator="new")
    old_bytes, new_bytes = old.read_bytes(), target.read_bytes()
    result = adopt_working_directory_store(target, cwd=tmp_path / "cwd")
    assert result is not None and not result.moved
    assert "Two uploads stores" in result.message and "nothing merged" in result.message
    assert "store export" in result.message and "store import" in result.message
    assert old.read_bytes() == old_bytes and target.read_bytes() == new_bytes


def test_an_empty_store_at_the_new_place_takes_the_old_rows(tmp_path):
    old = _old_store(tmp_path / "cwd")
    target = tmp_path / "uploads" / "overrides.sqlite"
    OverrideStore(target)  # the app opened it already: empty
    result = adopt_working_directory_store(target, cwd=tmp_path / "cwd")
    assert result is not None and result.moved
    assert OverrideStore(target).decisions()["annotator"].tolist() == ["ann"]
    assert not old.exists()


def test_an_old_store_is_not_moved_into_a_team_server(tmp_path):
    old = _old_store(tmp_path / "cwd")
    result = adopt_working_directory_store("postgresql://ann:pw123@db/team", cwd=tmp_path / "cwd")
    assert result is not None and not result.moved and old.exists()
    assert "nothing was moved" in result.message and "pw123" not in result.message


def test_no_old_store_no_message(tmp_path):
    assert adopt_working_directory_store(tmp_path / "u" / "overrides.sqlite", cwd=tmp_path) is None


def test_store_files_and_their_wal_are_private(tmp_path):
    path = tmp_path / "new" / "o.sqlite"
    store = OverrideStore(path)
    assert _mode(path) == 0o600 and _mode(path.parent) == 0o700
    keeper = sqlite3.connect(path)  # a reader holding the WAL open, so it outlives the writer's connection
    keeper.execute("SELECT COUNT(*) FROM overrides").fetchall()
    store.set_override(DS, "i1", "m", "j", "ca", 1, annotator="ann")
    wal, shm = Path(f"{path}-wal"), Path(f"{path}-shm")
    assert wal.is_file() and shm.is_file()
    assert (_mode(wal), _mode(shm)) == (0o600, 0o600)
    keeper.close()
    assert sorted(p.name for p in path.parent.iterdir() if not p.name.startswith("o.sqlite")) == []


def _open_and_write(path: str, worker: int) -> None:
    OverrideStore(path).set_override(DS, f"i{worker}", "m", "j", "ca", 1, annotator=f"w{worker}")


def test_processes_creating_the_same_new_store_at_once_all_succeed(tmp_path):
    path = str(tmp_path / "fresh.sqlite")
    context = multiprocessing.get_context("fork")
    workers = [context.Process(target=_open_and_write, args=(path, w)) for w in range(4)]
    for process in workers:
        process.start()
    for process in workers:
        process.join(60)
    assert [process.exitcode for process in workers] == [0] * 4
    assert len(OverrideStore(path).decisions(DS)) == 4 and _mode(Path(path)) == 0o600


# ------------------------------------------------------------------------------------------ masking

@pytest.mark.parametrize(("location", "masked", "secret"), [
    ("postgresql://ann:UrlPass-1@db/team", "postgresql://ann:***@db/team", "UrlPass-1"),
    ("postgresql://ann@db/team?password=QPass-2&sslmode=require", "postgresql://ann@db/team?password=***&sslmode=require",
     "QPass-2"),
    ("host=db.lab user=ann password=KwPass-55 dbname=team", "host=db.lab user=ann password=*** dbname=team",
     "KwPass-55"),
    ("host = db  password = 'Kw Pass \\' 55'  dbname=team", "host=db password=*** dbname=team", "Kw Pass"),
    ("dbname='my team' sslpassword=KeyPass-3 host=db", "dbname='my team' sslpassword=*** host=db", "KeyPass-3"),
    ("host=db password='Unterminated-4", "host=db password=***", "Unterminated-4"),
    ("host=db password=Esc\\ aped-5 user=ann", "host=db password=*** user=ann", "aped-5"),
])
def test_every_dsn_form_is_masked(location, masked, secret):
    assert is_server_location(location)
    assert mask_location(location) == masked and secret not in mask_location(location)


def test_keyword_strings_parse_as_libpq_reads_them():
    assert parse_keyword_dsn("host = db password = 'a \\'b\\' c' user=ann port=5432") == [
        ("host", "db"), ("password", "a 'b' c"), ("user", "ann"), ("port", "5432")]
    assert parse_keyword_dsn("dbname='' host=x") == [("dbname", ""), ("host", "x")]
    with pytest.raises(ValueError, match="missing '='"):
        parse_keyword_dsn("host db")
    assert not is_server_location("notes=1.sqlite") and not is_server_location("/data/host=x.sqlite")


def _keyword_form(url: str, *, with_password: bool = True) -> str:
    parts = urlsplit(url)
    options = dict(parse_qsl(parts.query)).get("options", "")
    fields = [f"host={parts.hostname}", f"port={parts.port}", f"user={parts.username}",
              f"dbname={parts.path.lstrip('/')}", f"options='{options}'"]
    if with_password:
        fields.insert(3, f"password='{parts.password}'")
    return " ".join(fields)


def test_a_keyword_form_store_works_and_never_shows_its_password(postgres_url, capsys):
    location = _keyword_form(postgres_url)
    store = open_store(location)
    store.set_override(DS, "i1", "m", "j", "ca", 1, annotator="ann")
    assert open_store(postgres_url).decisions(DS)["value"].tolist() == [1.0]  # the same server and schema
    for text in (store.label, repr(store), store.short_label):
        assert PASSWORD not in text
    assert "password=***" in store.label and store.short_label.startswith("127.0.0.1:")
    assert main(["store", "info", location]) == 0
    out = capsys.readouterr().out
    assert PASSWORD not in out and "password from the location" in out


def test_a_password_from_pgpassword_is_never_printed(postgres_url, monkeypatch, capsys):
    monkeypatch.setenv("PGPASSWORD", PASSWORD)
    location = _keyword_form(postgres_url, with_password=False)
    assert password_source(location) == "the environment (PGPASSWORD)"
    assert main(["store", "info", location, "--json"]) == 0
    out = capsys.readouterr().out
    assert PASSWORD not in out and '"password_from": "the environment (PGPASSWORD)"' in out
    monkeypatch.setenv("PGPASSWORD", "Wrong-Env-Pass")
    assert main(["store", "info", location]) == 2
    err = capsys.readouterr().err
    assert "Wrong-Env-Pass" not in err and "cannot be reached" in err and err.count("\n") == 1


def test_an_unreachable_keyword_store_is_one_masked_line(capsys):
    assert main(["store", "info", "host=127.0.0.1 port=1 user=ann password=KwPass-55 connect_timeout=2"]) == 2
    err = capsys.readouterr().err
    assert "KwPass-55" not in err and "password=***" in err and err.count("\n") == 1


# ------------------------------------------------------------------------------------------ read-only stores

def _filled(path: Path) -> Path:
    store = OverrideStore(path)
    store.set_override(DS, "i1", "m", "j", "ca", 1, annotator="ann", text_hash="0123456789abcdef")
    return path


@pytest.fixture()
def read_only_file(tmp_path):
    path = _filled(tmp_path / "archive" / "o.sqlite")
    path.chmod(0o444)
    yield path
    path.chmod(0o600)


def test_a_read_only_file_opens_for_reading_and_refuses_writes(read_only_file):
    content = read_only_file.read_bytes()
    with pytest.raises(StoreError, match="is read-only"):
        OverrideStore(read_only_file)  # to write: an error, as before
    store = open_store(read_only_file, read_only=None)
    assert store.read_only and store.decisions(DS)["value"].tolist() == [1.0]
    with pytest.raises(StoreError) as caught:
        store.set_override(DS, "i1", "m", "j", "ca", 0, annotator="ann")
    assert "is read-only" in str(caught.value) and "\n" not in str(caught.value)
    with pytest.raises(StoreError, match="is read-only"):
        skip_output(store, DS, "i1", "m", "ca", annotator="ann")
    assert read_only_file.read_bytes() == content
    assert not open_store(read_only_file.with_name("other.sqlite"), read_only=None).read_only  # writable: writes


def test_a_store_in_a_read_only_folder_is_read_without_touching_the_folder(tmp_path):
    path = _filled(tmp_path / "frozen" / "o.sqlite")
    path.parent.chmod(0o555)
    try:
        store = open_store(path, read_only=None)
        assert store.read_only and store.decisions(DS)["value"].tolist() == [1.0]
        assert sorted(p.name for p in path.parent.iterdir()) == ["o.sqlite"]  # no -wal, no -shm
    finally:
        path.parent.chmod(0o700)


def test_asking_for_read_only_never_writes_and_an_older_schema_is_read_from_a_copy(tmp_path):
    from test_store_order import _downgrade

    path = _filled(tmp_path / "o.sqlite")
    _downgrade(str(path))
    content = path.read_bytes()
    store = open_store(path, read_only=True)
    assert store.read_only and store.decisions(DS)[["value", "seq"]].values.tolist() == [[1.0, 1]]
    with pytest.raises(StoreError, match="is read-only"):
        store.undo_last("ann")
    assert path.read_bytes() == content
    assert sqlite3.connect(path).execute("PRAGMA user_version").fetchone()[0] == 3
    with pytest.raises(StoreError, match="no such store"):
        open_store(tmp_path / "absent.sqlite", read_only=True)
    assert not (tmp_path / "absent.sqlite").exists()


def test_reading_commands_work_on_a_read_only_store_and_writes_say_so(read_only_file, tmp_path, capsys):
    outputs = tmp_path / "outputs.csv"
    outputs.write_text("item_id,model,reference,generation\ni1,m,r,g\n", encoding="utf-8")
    assert main(["metrics", str(outputs), "--store", str(read_only_file), "--store-name", DS, "--no-ld",
                 "--format", "json"]) == 0
    assert "overrides: 0 decisions applied" in capsys.readouterr().err
    assert main(["store", "info", str(read_only_file)]) == 0
    assert "(sqlite, read-only); 1 decisions" in capsys.readouterr().out
    assert main(["store", "export", str(read_only_file), str(tmp_path / "l.csv")]) == 0
    assert "exported 1 decisions" in capsys.readouterr().out
    assert main(["store", "import", str(tmp_path / "l.csv"), "--store", str(read_only_file)]) == 2
    err = capsys.readouterr().err
    assert "is read-only" in err and err.count("\n") == 1


def test_a_read_only_postgresql_login_opens_for_reading(postgres_url):
    store = open_store(postgres_url)
    store.set_override(DS, "i1", "m", "j", "ca", 1, annotator="ann")
    with select_only_login(postgres_url, "readonly-pw") as reader_url:
        reader = open_store(reader_url, read_only=None)
        try:
            assert reader.read_only and reader.decisions(DS)["value"].tolist() == [1.0]
            with pytest.raises(StoreError, match="is read-only") as caught:
                reader.set_override(DS, "i2", "m", "j", "ca", 0, annotator="ann")
            assert "readonly-pw" not in str(caught.value)
        finally:
            reader.close()


def test_default_transaction_read_only_opens_for_reading(postgres_url):
    open_store(postgres_url).set_override(DS, "i1", "m", "j", "ca", 1, annotator="ann")
    url = postgres_url + "%20-cdefault_transaction_read_only%3Don"
    store = open_store(url, read_only=None)
    assert store.read_only and store.decisions(DS)["value"].tolist() == [1.0]
    asked = open_store(postgres_url, read_only=True)  # a login that could write, opened for reading
    with pytest.raises(StoreError, match="is read-only"):
        asked.set_override(DS, "i1", "m", "j", "ca", 0, annotator="ann")
    assert asked.fetch("SHOW default_transaction_read_only") == [("on",)]
    store.close()
    asked.close()


def test_a_read_only_postgresql_store_of_an_older_schema_says_so(postgres_url):
    from test_store_order import _downgrade

    open_store(postgres_url).set_override(DS, "i1", "m", "j", "ca", 1, annotator="ann")
    _downgrade(postgres_url)
    with pytest.raises(StoreError, match="opened read-only and holds schema version 3") as caught:
        open_store(postgres_url, read_only=True)
    assert PASSWORD not in str(caught.value)
    assert open_store(postgres_url).decisions(DS)["seq"].tolist() == [1]  # a login that can write upgrades it
