"""Store locations as a person types them: ``~`` expanded, server locations libpq would misread refused, and no
password printed in any message (the CLI's one line included)."""

from __future__ import annotations

from pathlib import Path

import pytest

from empathy.cli import main
from empathy.labels.backends import open_for_reading, open_store
from empathy.labels.locations import (
    StoreError,
    default_store_path,
    location_problem,
    mask_location,
    store_location,
    url_parts,
)

SECRET = "S3cr#t"


@pytest.mark.parametrize(("location", "shown"), [
    ("postgresql://ann:PW@db/team?sslpassword=SPW", "postgresql://ann:***@db/team?sslpassword=***"),
    # libpq ends the user part at the first '@': a '#' or '?' of the password belongs to it
    ("postgresql://ann:p#w?x@db/team", "postgresql://ann:***@db/team"),
    ("postgresql://ann:p%2Fw@db:5433/team?sslmode=require", "postgresql://ann:***@db:5433/team?sslmode=require"),
    ("host=db user=ann password='a b' sslpassword=SPW dbname=team",
     "host=db user=ann password=*** sslpassword=*** dbname=team"),
    ("host=db pasword=PW dbname=team", "host=db *** dbname=team"),
    ("postgressql://ann:PW@db/team", "postgressql://***"),
    ("~/x.sqlite", "~/x.sqlite"),
])
def test_mask_location_shows_no_password(location, shown):
    assert mask_location(location) == shown


def test_url_parts_cut_as_libpq_cuts():
    parts = url_parts("postgresql://ann:p#w?x@db1,db2:5433/team?sslmode=require&password=Q")
    assert (parts.user, parts.password, parts.hosts, parts.database) == ("ann", "p#w?x", "db1,db2:5433", "team")
    assert parts.query_pairs() == [("sslmode", "require"), ("password", "Q")]


@pytest.mark.parametrize(("location", "why"), [
    (f"postgressql://ann:{SECRET}@db/team", "neither postgresql:// nor postgres:// (the closest is 'postgresql')"),
    (f"postgresql:ann:{SECRET}@db/team", "lacks the '//' after its scheme"),
    (f"ann:{SECRET}@db/team", "looks like user:password@host without a scheme"),
    (f"postgresql://ann:ab/{SECRET}@db/team", "a port that is not a number"),
    (f"postgresql://ann:a@{SECRET}@db/team", "more than one '@' before the host"),
    (f"postgresql://ann:{SECRET}@db/team?sslpasword={SECRET}", "1st query parameter that is not a libpq"),
    (f"postgresql://ann:{SECRET}@db/team?sslmode", "1st query parameter that is not one key=value"),
    (f"hots=db password={SECRET} dbname=team", "1st key is not a libpq keyword (the closest is 'host')"),
    (f"host=db pasword={SECRET}", "2nd key is not a libpq keyword (the closest is 'password')"),
])
def test_a_misread_server_location_is_refused_without_its_password(location, why, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert why in location_problem(location)
    with pytest.raises(StoreError) as caught:
        open_store(location)
    message = str(caught.value)
    assert why in message and "nothing was created or written" in message
    assert SECRET not in message and "\n" not in message
    assert list(tmp_path.iterdir()) == []  # no folder named after a piece of the password


def test_the_command_line_prints_one_line_without_the_password(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    for location in (f"postgressql://ann:{SECRET}@db/team", f"hots=db password={SECRET}"):
        assert main(["store", "info", location]) == 2
        err = capsys.readouterr().err
        assert SECRET not in err and err.count("\n") == 1 and "nothing was created" in err
    monkeypatch.setenv("EMPATHY_STORE", f"postgresql://ann:x/{SECRET}@db/team")
    assert main(["store", "info"]) == 2
    err = capsys.readouterr().err
    assert SECRET not in err and "%2F" in err
    assert list(tmp_path.iterdir()) == []


def test_usable_locations_pass_unchanged_or_normalised(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    assert store_location("~/x.db") == tmp_path / "x.db"
    assert store_location(Path("~/x.db")) == tmp_path / "x.db"
    assert store_location(" POSTGRESQL://ann:PW@db/team ") == "postgresql://ann:PW@db/team"
    assert store_location("host=db dbname=team") == "host=db dbname=team"
    # a path holding ':' and '@' is a file when written as one
    assert store_location("./a:b@c.sqlite") == Path("a:b@c.sqlite")
    assert store_location("data/x.sqlite") == Path("data/x.sqlite")


def test_a_tilde_store_opens_under_home(tmp_path, monkeypatch):
    home, work = tmp_path / "home", tmp_path / "work"
    home.mkdir()
    work.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(work)
    assert open_store("~/x.sqlite").decisions().empty
    assert (home / "x.sqlite").is_file()
    assert list(work.iterdir()) == []  # no ./~/x.sqlite
    assert open_for_reading("~/x.sqlite").read_only  # found there, so opened read-only
    monkeypatch.setenv("EMPATHY_STORE", "~/y.sqlite")
    assert default_store_path(work) == home / "y.sqlite"


def test_a_bad_environment_store_is_refused_by_default_store_path(monkeypatch):
    monkeypatch.setenv("EMPATHY_STORE", f"postgressql://ann:{SECRET}@db/team")
    with pytest.raises(StoreError) as caught:
        default_store_path("/data")
    assert SECRET not in str(caught.value)


def test_the_app_shows_a_bad_environment_store_without_its_password(tmp_path, monkeypatch):
    pytest.importorskip("streamlit")
    from streamlit.testing.v1 import AppTest

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("EMPATHY_STORE", "postgressql://ann:Zq9xK7@db/team")
    monkeypatch.setenv("EMPATHY_CACHE_DIR", str(tmp_path / "cache"))
    at = AppTest.from_file(str(Path(__file__).resolve().parent.parent / "app.py"), default_timeout=240)
    at.session_state["annotator"] = "tester"
    at.run()
    at.switch_page("app_pages/1_Data.py").run()
    assert not at.exception, [e.value for e in at.exception]
    shown = [str(e.value) for e in at.error] + [str(e.value) for e in at.caption] + [str(e.value) for e in
                                                                                     at.markdown]
    assert any("override store cannot be used" in text for text in shown), shown
    assert not any("Zq9xK7" in text for text in shown)  # markdown escapes punctuation: a plain secret
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cache"]  # no folder named after the password
