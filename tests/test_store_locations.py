"""Store locations as a person types them: a password is never printed, text meant as a server location that libpq
would not read is refused before anything is created, and a file path's ``~`` is the home folder
(:func:`empathy.labels.locations.store_location`, :func:`~empathy.labels.locations.mask_location`)."""

from __future__ import annotations

import pytest

from empathy.cli import main
from empathy.labels.locations import StoreError, mask_location, store_location, url_parts

LEDGER = "item_id,model,rater,dimension,value,annotator,text_hash\n1,a,j,ca,1,alice,0123456789abcdef\n"


def _one_line(capsys, code: int) -> str:
    err = capsys.readouterr().err
    assert code == 2, err
    assert len(err.strip().splitlines()) == 1, err
    return err


@pytest.mark.parametrize(("location", "secret", "fragments"), [
    ("postgressql://ann:PW-4417@db.lab/team", "PW-4417", ["postgressql://***", "the closest is 'postgresql'"]),
    ("postgresql:ann:PW-4417@db.lab/team", "PW-4417", ["lacks the '//'"]),
    ("ann:PW-4417@db.lab/team", "PW-4417", ["without a scheme"]),
    ("postgresql://ann:PW/4417@db.lab/team", "4417", ["percent-encoded as %2F"]),
    ("postgresql://ann:PW@4417@db.lab/team", "4417", ["more than one '@'"]),
    ("hots=db.lab password=PW-4417 dbname=team", "PW-4417", ["1st key is not a libpq keyword", "'host'"]),
    ("host=db.lab pasword=PW-4417", "PW-4417", ["2nd key is not a libpq keyword"]),
    ("postgresql://ann@db.lab/team?sslmode=require&pasword=PW-4417", "PW-4417",
     ["2nd query parameter that is not a libpq connection keyword"]),
], ids=["misspelt-scheme", "no-slashes", "no-scheme", "slash-in-password", "at-in-password",
        "misspelt-first-key", "misspelt-password-key", "misspelt-query-key"])
def test_a_location_libpq_would_not_read_is_refused_in_one_line_without_its_password(
        tmp_path, capsys, monkeypatch, location, secret, fragments):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "l.csv").write_text(LEDGER, encoding="utf-8")
    err = _one_line(capsys, main(["store", "import", "l.csv", "--store", location, "--dataset", "ds"]))
    assert secret not in err
    assert all(fragment in err for fragment in fragments), err
    assert "nothing was created or written" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["l.csv"]  # no folder named after a piece of it


@pytest.mark.parametrize(("location", "shown"), [
    ("postgresql://ann:pa#ss?w@db.lab:5433/team", "postgresql://ann:***@db.lab:5433/team"),
    ("postgresql://ann:pa%2Fss@db.lab/team?sslmode=require", "postgresql://ann:***@db.lab/team?sslmode=require"),
    ("postgresql://ann@db.lab/team?sslpassword=KEY-77&password=PW-88",
     "postgresql://ann@db.lab/team?sslpassword=***&password=***"),
    ("POSTGRESQL://ann:pw@db.lab/team", "POSTGRESQL://ann:***@db.lab/team"),
    ("host=db.lab sslpassword='KEY 77' password=PW-88", "host=db.lab sslpassword=*** password=***"),
    ("/srv/labels/overrides.sqlite", "/srv/labels/overrides.sqlite"),
])
def test_mask_location_hides_every_password_where_libpq_reads_it(location, shown):
    assert mask_location(location) == shown


def test_a_password_holding_hash_or_question_mark_is_cut_as_libpq_cuts_it():
    parts = url_parts("postgresql://ann:pa#ss?w@db.lab:5433/team?sslmode=require")
    assert (parts.user, parts.password, parts.hosts, parts.database, parts.query) == (
        "ann", "pa#ss?w", "db.lab:5433", "team", "sslmode=require")
    assert store_location("  PostgreSQL://ann:pw@db/team ") == "postgresql://ann:pw@db/team"


def test_a_tilde_is_the_home_folder_for_the_option_and_the_environment(tmp_path, capsys, monkeypatch):
    home, work = tmp_path / "home", tmp_path / "work"
    home.mkdir()
    work.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(work)
    (work / "l.csv").write_text(LEDGER, encoding="utf-8")
    assert main(["store", "import", "l.csv", "--store", "~/by-option.sqlite", "--dataset", "ds"]) == 0
    monkeypatch.setenv("EMPATHY_STORE", "~/by-environment.sqlite")
    assert main(["store", "import", "l.csv", "--dataset", "ds"]) == 0
    capsys.readouterr()
    assert sorted(p.name for p in home.iterdir()) == ["by-environment.sqlite", "by-option.sqlite"]
    assert sorted(p.name for p in work.iterdir()) == ["l.csv"]  # no ./~ folder
    assert store_location("~/x.sqlite") == home / "x.sqlite"


def test_a_file_path_is_a_file_whatever_it_holds():
    assert store_location("host=db.lab password=x") == "host=db.lab password=x"  # a server
    for text in ("./ann:pw@db", "../team:1@x.sqlite", "/srv/a=b c=d.sqlite"):
        assert not isinstance(store_location(text), str)
    with pytest.raises(StoreError, match="is empty"):
        store_location("   ")
