"""Who is deciding, and what they may do: the signed-in identity (or the local name), the roles and the store's mode.

Two modes, chosen by the deployer's ``.streamlit/secrets.toml``:

* **login** (an ``[auth]`` section: Streamlit's own OpenID Connect, ``st.login`` / ``st.user``): the annotator of
  every decision is the signed-in identity, shown and never typed: the e-mail when the provider verified it, else
  ``<issuer>#<subject>`` (:func:`empathy.labels.roles.identity_from_claims`); signed out, nobody writes;
* **local** (no ``[auth]``): the annotator is the name committed in the sidebar's one name box (remembered in the
  settings file, :mod:`empathy.settings`).

Roles (:mod:`empathy.labels.roles`) come from the ``[roles]`` section of the secrets, else from the file
``$EMPATHY_ROLES``; the store is opened with them (:func:`empathy_app.loading.get_store`), so every write is
checked there too. :class:`Access` is what the pages ask: may this session do an action, and if not, why (the
reason a disabled control shows, the text of :class:`empathy.labels.roles.AccessDenied`).

Signing out: Streamlit reads ``st.user`` from the sign-in cookie once, when a tab's session connects, so a second
tab of the browser would keep the identity after the first signed out. The sidebar's Sign out therefore ends the
*sign-in* itself on this server (:class:`SignOuts`: a digest of its claims, the same in every tab that shares the
cookie, the ID token's nonce and times making each sign-in's digest its own) before Streamlit deletes the cookie;
every run of every session then reads the identity through :func:`signed_in_identity`, which gives nobody for an
ended sign-in, and every write checks :func:`write_refusal` at the moment it writes (a button's callback, a key
of Relabel's queue), so no write follows a sign-out in any tab.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass

import streamlit as st

from empathy.labels.roles import AccessDenied, Roles, identity_from_claims, roles_from_env, roles_from_mapping
from empathy_app import session_keys

#: What each action is called in a reason ("... to decide").
_VERB = {"decide": "decide", "adjudicate": "adjudicate", "assign": "assign outputs",
         "read": "read the store"}


def _plain(value: object) -> object:
    """A secrets section as plain dicts and lists (Streamlit's ``AttrDict`` is not a dict)."""
    if isinstance(value, Mapping):
        return {str(key): _plain(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(item) for item in value]
    return value


def secrets_section(name: str) -> dict | None:
    """The ``[name]`` section of the app's secrets as a dict; ``None`` when absent or there is no secrets file."""
    try:
        if name not in st.secrets:
            return None
        section = st.secrets[name]
    except FileNotFoundError:  # no secrets.toml at all (Streamlit's StreamlitSecretNotFoundError)
        return None
    plain = _plain(section)
    return plain if isinstance(plain, dict) else None


def login_configured() -> bool:
    """Whether the deployer configured a login (an ``[auth]`` section in the secrets)."""
    return secrets_section("auth") is not None


def login_providers() -> list[str | None]:
    """The providers ``st.login`` can be called with: ``[None]`` for the unnamed one (``[auth]`` holds a
    ``client_id``), else the names of the ``[auth.NAME]`` sections."""
    auth = secrets_section("auth") or {}
    if "client_id" in auth:
        return [None]
    return [name for name, value in auth.items() if isinstance(value, dict)] or [None]


def load_roles() -> Roles | None:
    """The roles: the secrets' ``[roles]`` (the roles file's content: ``default``, ``viewers_see_hidden`` and its own
    ``[roles.roles]`` table), else the file ``$EMPATHY_ROLES``; ``None`` when neither is given (nothing checked).

    Raises :class:`empathy.io.DataError` (one line: source, line, key) for malformed roles.
    """
    section = secrets_section("roles")
    if section is not None:
        return roles_from_mapping(section, source="secrets [roles]")
    return roles_from_env()


def roles_token(roles: Roles | None) -> str:
    """A string that changes whenever the roles do (part of the cached store's key)."""
    if roles is None:
        return ""
    return repr((roles.source, roles.default, roles.viewers_see_hidden, sorted(roles.members.items())))


class SignOuts:
    """The sign-ins ended on this server (by their :func:`sign_in_digest`), with when; shared by every session.

    Only grows with sign-outs (one entry each), so it stays small.
    """

    def __init__(self) -> None:
        self._ended: dict[str, float] = {}
        self._lock = threading.Lock()

    def end(self, digest: str) -> None:
        """Record that the sign-in ``digest`` ended now."""
        with self._lock:
            self._ended.setdefault(digest, time.time())

    def ended(self, digest: str) -> bool:
        """Whether the sign-in ``digest`` was ended."""
        with self._lock:
            return digest in self._ended


@st.cache_resource(show_spinner=False)
def sign_outs() -> SignOuts:
    """This server's :class:`SignOuts` (one for every session)."""
    return SignOuts()


#: The JSON types a claim of an ID token has.
_CLAIM_TYPES = (str, int, float, bool, list, dict, type(None))


def sign_in_digest(claims: Mapping[str, object]) -> str:
    """A digest naming one sign-in: of every claim of its cookie (the same in each tab sharing it; the ID token's
    nonce and issue time differ between two sign-ins of one person)."""
    # the claims only: st.user also holds objects (its token proxy) whose text differs between sessions
    plain = {str(key): value for key, value in claims.items() if isinstance(value, _CLAIM_TYPES)}
    text = json.dumps(plain, sort_keys=True, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _claims() -> dict[str, object]:
    """This session's sign-in claims (``st.user``), ``{}`` when it is signed out."""
    user = st.user
    if not user.get("is_logged_in", False):
        return {}
    return {str(key): user.get(key) for key in user}


@dataclass(frozen=True)
class SignIn:
    """This session's sign-in as the sidebar tells it: ``identity`` (``""``: nobody writes) and, when the
    provider signed someone in but the app takes no identity from it, ``note`` saying why (plain text)."""

    identity: str
    note: str = ""


def sign_in() -> SignIn:
    """This run's :class:`SignIn`: nobody after a sign-out (in any tab of this browser, :class:`SignOuts`), nor
    for claims that vouch for no identity (an unverified e-mail and no subject)."""
    claims = _claims()
    if not claims:
        return SignIn("")
    if sign_outs().ended(sign_in_digest(claims)):
        return SignIn("", "This sign-in was ended (signed out, perhaps in another tab of this browser): sign in "
                          "again to decide")
    identity = identity_from_claims(claims)
    email = claims.get("email")
    if not identity:
        return SignIn("", "The provider signed you in but vouches for no identity this app can use (no verified "
                          "e-mail, no issuer and subject); nothing can be written")
    if isinstance(email, str) and email.strip() and identity != email.strip():
        return SignIn(identity, f"The e-mail {email.strip()} is not verified by the provider, so it is not your "
                                "identity here")
    return SignIn(identity)


def signed_in_identity() -> str:
    """The signed-in identity (:func:`empathy.labels.roles.identity_from_claims`); ``""`` when signed out, after
    a sign-out in any tab of this browser, or when the claims vouch for none."""
    return sign_in().identity


def sign_out() -> None:
    """End this session's sign-in in every tab of the browser (:class:`SignOuts`), then Streamlit's ``st.logout``
    (which deletes the cookie and opens the provider's end-session page)."""
    claims = _claims()
    if claims:
        sign_outs().end(sign_in_digest(claims))
    st.logout()


def local_name() -> str:
    """The name committed in the sidebar's name box (local mode; ``""`` before one is committed)."""
    return str(st.session_state.get(session_keys.ANNOTATOR, "") or "").strip()


@dataclass(frozen=True)
class Access:
    """This session's identity and rights on the loaded store.

    ``identity``: the annotator of every write (``""``: nobody, so nothing is written); ``login``: whether it
    comes from a sign-in; ``roles``: the store's roles (``None``: every identity may do everything, as a single
    user's store); ``read_only``: the store was opened for reading only; ``store``: its label, for messages.
    """

    identity: str
    login: bool
    roles: Roles | None = None
    read_only: bool = False
    store: str = ""

    @property
    def role(self) -> str | None:
        """The identity's role (``None`` without roles, or without an identity or access)."""
        if self.roles is None or not self.identity:
            return None
        return self.roles.role_of(self.identity)

    def why_not(self, action: str) -> str | None:
        """Why this session may not do ``action`` (plain text, one line), or ``None`` when it may.

        The store's mode first (read-only), then the identity (signed out, no name), then the roles: the text of
        :class:`empathy.labels.roles.AccessDenied`, as the store would raise it.
        """
        if action != "read" and self.read_only:
            return (f"The store {self.store} is read-only (opened for reading): nothing can be written; "
                    "nothing was written")
        if not self.identity:
            verb = _VERB.get(action, action)
            if self.login:
                return f"Signed out: sign in (sidebar) to {verb}"
            return f"No annotator name: type yours in the sidebar and press Use this name to {verb}"
        if self.roles is None:
            return None
        try:
            self.roles.require(self.identity, action)
        except AccessDenied as error:
            return str(error)
        return None

    def why_not_curate(self) -> str | None:
        """Why this session may not change the exhibit list (pin, note, order), or ``None``: a single user's store
        (no login, no roles) needs no name for it, as before; otherwise it takes the right to decide."""
        if not (self.login or self.identity or self.roles is not None or self.read_only):
            return None
        return self.why_not("decide")

    def can(self, action: str) -> bool:
        """Whether this session may do ``action`` (one of :data:`empathy.labels.roles.ACTIONS`)."""
        return self.why_not(action) is None

    def sees_hidden(self) -> bool:
        """Whether this session may see what blind mode hides (without roles, or signed out in no mode: yes)."""
        if self.roles is None:
            return True
        return self.roles.may_see_hidden(self.identity)

    def describe(self) -> str:
        """Who is deciding, for people (plain text): ``alice@lab.example (annotator)``, or ``""``."""
        if not self.identity:
            return ""
        role = self.role
        return self.identity + (f" ({role})" if role else "")


def write_refusal(annotator: str) -> str | None:
    """Why a write as ``annotator`` may not happen now (``None``: it may): checked when the write is made, since a
    button's callback or a queued key can arrive after a sign-out (in this tab or another of the browser) or a
    change of name, with the name an earlier run drew."""
    now = signed_in_identity() if login_configured() else local_name()
    if now == annotator:
        return None
    if not now:
        return ("Signed out: sign in (sidebar) to decide; nothing was written" if login_configured() else
                "No annotator name: type yours in the sidebar and press Use this name; nothing was written")
    return f"The annotator is now {now}, not {annotator}: nothing was written as {annotator}"


def access(store: object | None = None) -> Access:
    """This run's :class:`Access` on ``store`` (the loaded data set's; ``None`` when none is loaded)."""
    login = login_configured()
    who = signed_in_identity() if login else local_name()
    if store is None:
        return Access(who, login)
    return Access(who, login, getattr(store, "roles", None), bool(getattr(store, "read_only", False)),
                  str(getattr(store, "short_label", "")))
