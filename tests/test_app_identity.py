"""Who a signed-in person is, and that signing out ends it everywhere (issue 41, items 2 and 3).

Identity comes only from what the provider vouches for: a verified e-mail, else ``<issuer>#<subject>``; an
e-mail claim with ``email_verified`` false (or absent) never names anyone, so an account claiming bob's address
gets neither bob's role nor his name. Roles files are keyed the same way (e-mails compared without case, subject
identities exactly). Signing out in one tab ends the sign-in in every session that shares the browser's cookie
(AppTest: two sessions with the same claims, as two tabs of one browser hold): the other session's next key is
refused, nothing is written, and it says signed out.
"""

from __future__ import annotations

import pytest

pytest.importorskip("streamlit")
from conftest import app_ok as _ok  # noqa: E402
from conftest import app_texts as _texts  # noqa: E402
from relabel_keys import press, window  # noqa: E402
from test_app_team import AUTH, _app  # noqa: E402

from empathy.labels.roles import identity_from_claims, is_subject_identity, parse_roles  # noqa: E402
from empathy.labels.sqlite import OverrideStore  # noqa: E402

ISSUER = "https://login.lab.example/realms/lab"
ROLES = {"default": "none", "viewers_see_hidden": False,
         "roles": {"alice@lab.example": "annotator", "bob@lab.example": "adjudicator",
                   f"{ISSUER}#dora-7": "annotator"}}


def _claims(sub: str, email: str | None = None, verified: object = None, **more: object) -> dict:
    claims: dict = {"is_logged_in": True, "iss": ISSUER, "sub": sub, "aud": "empathy-app", "nonce": f"n-{sub}",
                    "iat": 1_760_000_000, "exp": 1_760_003_600, **more}
    if email is not None:
        claims["email"] = email
    if verified is not None:
        claims["email_verified"] = verified
    return claims


# ------------------------------------------------------------------------------------------ the derivation

@pytest.mark.parametrize(("claims", "identity"), [
    (_claims("a-1", "alice@lab.example", True), "alice@lab.example"),
    (_claims("a-1", " alice@lab.example ", "true"), "alice@lab.example"),  # Cognito sends the string
    (_claims("m-9", "bob@lab.example", False), f"{ISSUER}#m-9"),  # unverified: never bob
    (_claims("m-9", "bob@lab.example"), f"{ISSUER}#m-9"),  # no email_verified claim: not verified
    (_claims("m-9", "bob@lab.example", "yes"), f"{ISSUER}#m-9"),
    (_claims("m-9", "bob@lab.example", 1), f"{ISSUER}#m-9"),  # only JSON true says verified
    (_claims("Dora-7"), f"{ISSUER}#Dora-7"),  # the subject keeps its case
    ({"is_logged_in": True, "sub": "s-2"}, ""),  # no issuer: nothing vouches for the subject
    ({"is_logged_in": True, "iss": "not a url", "sub": "s-2"}, ""),
    ({"is_logged_in": True, "iss": ISSUER, "sub": "  "}, ""),
    ({"is_logged_in": True, "email": "bob@lab.example"}, ""),
])
def test_the_identity_is_a_verified_email_or_the_issuers_subject(claims, identity):
    assert identity_from_claims(claims) == identity


def test_roles_are_keyed_by_verified_email_or_subject_identity():
    roles = parse_roles(f'''default = "none"
[roles]
"Alice@Lab.example" = "annotator"
"{ISSUER}#dora-7" = "adjudicator"
''', source="roles.toml")
    assert roles.role_of("alice@lab.example") == "annotator"  # e-mails: case does not matter, as before
    assert roles.role_of(f"{ISSUER}#dora-7") == "adjudicator"
    assert roles.role_of(f" {ISSUER}#dora-7 ") == "adjudicator"
    assert roles.role_of(f"{ISSUER}#DORA-7") is None  # subjects are case-sensitive: another person
    assert roles.role_of(identity_from_claims(_claims("m-9", "alice@lab.example", False))) is None
    assert is_subject_identity(f"{ISSUER}#x") and not is_subject_identity("alice@lab.example")
    assert not is_subject_identity("alice#x") and not is_subject_identity(f"{ISSUER}#")


# ------------------------------------------------------------------------------------------ in the app

def test_an_unverified_email_naming_another_person_gets_no_role_and_writes_nothing_as_them(tmp_path, _store):
    from test_app import _path_source, _write_fixture

    source = _path_source(_write_fixture(tmp_path / "fixture"))
    forged = _claims("mallory-3", "bob@lab.example", False)
    at = _app(source, secrets={"auth": AUTH, "roles": ROLES}, user=forged)
    sidebar = " ".join(_texts(at.sidebar.markdown) + _texts(at.sidebar.caption))
    assert f"Signed in as **{ISSUER}#mallory-3**" in sidebar
    assert "The e-mail bob@lab.example is not verified by the provider, so it is not your identity here" in sidebar
    assert "bob@lab.example" not in " ".join(_texts(at.sidebar.markdown))
    assert "adjudicator" not in sidebar
    reason = f"{ISSUER}#mallory-3 has no access: not listed in secrets [roles], whose default is 'none'"
    assert any(reason in i for i in _texts(at.info))
    # a key is refused with the roles' message; nothing is written, under any name
    press(at, 1.0)
    _ok(at)
    assert any(e.startswith("Refused key #1: ") and reason in e for e in _texts(at.error))
    assert OverrideStore(_store).decisions().empty and OverrideStore(_store).audit().empty
    # a listed subject identity decides under it
    dora = _app(source, secrets={"auth": AUTH, "roles": ROLES}, user=_claims("dora-7", "bob@lab.example"))
    assert window(dora)["annotator"] == f"{ISSUER}#dora-7"
    press(dora, 1.0)
    _ok(dora)
    assert set(OverrideStore(_store).decisions()["annotator"]) == {f"{ISSUER}#dora-7"}


def test_signing_out_in_one_tab_ends_the_identity_in_the_others(tmp_path, _store):
    from test_app import _path_source, _write_fixture

    source = _path_source(_write_fixture(tmp_path / "fixture"))
    alice = _claims("alice-1", "alice@lab.example", True)
    secrets = {"auth": AUTH, "roles": ROLES}
    first, second = _app(source, secrets=secrets, user=alice), _app(source, secrets=secrets, user=alice)
    press(second, 1.0)  # the second tab decides as alice
    assert set(OverrideStore(_store).decisions()["annotator"]) == {"alice@lab.example"}
    assert any("Signed in as **alice@lab.example**" in m for m in _texts(second.sidebar.markdown))
    # alice signs out in the first tab; the second (its session unchanged, as a tab not reloaded) presses keys
    first.button(key="identity_sign_out").click().run()
    before = len(OverrideStore(_store).audit())
    press(second, 0.0)
    _ok(second)
    assert any(e.startswith("Refused key #2: Signed out") and "nothing was written" in e for e in _texts(second.error))
    assert len(OverrideStore(_store).audit()) == before
    assert not any("Signed in as" in m for m in _texts(second.sidebar.markdown))
    assert any("This sign-in was ended" in c for c in _texts(second.sidebar.caption))
    assert any(b.label == "Sign in" for b in second.sidebar.button)
    assert not second.get("bidi_component")  # no queue: nothing more can be decided here
    # a session connecting with the ended sign-in's cookie (sent before the browser dropped it): signed out
    third = _app(source, secrets=secrets, user=alice)
    assert not third.get("bidi_component")
    assert len(OverrideStore(_store).audit()) == before
    # signing in again is a new sign-in (a new nonce and time): it decides again
    again = _app(source, secrets=secrets, user={**alice, "nonce": "n-again", "iat": alice["iat"] + 60})
    assert window(again)["annotator"] == "alice@lab.example"
