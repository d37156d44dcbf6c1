"""Who may do what to a store: the roles file a deployer controls, and the check every write goes through.

A team's deployer writes a TOML file (named by ``$EMPATHY_ROLES``, ``--roles FILE`` on the command line, or given
to the app as the ``[roles]`` of its secrets)::

    default = "viewer"            # role of an identity the file does not list: annotator, adjudicator, viewer
                                  # or "none" (no access at all); default "viewer"
    viewers_see_hidden = false    # may viewers see what blind mode hides (the judges' labels)? default false

    [roles]
    "alice@lab.example" = "annotator"
    "bob@lab.example" = "adjudicator"
    "carol@lab.example" = "viewer"

Rights (:data:`RIGHTS`): a ``viewer`` reads; an ``annotator`` also decides (set, import, confirm, undo their own,
skip); an ``adjudicator`` also adjudicates and assigns outputs to annotators.

Identities, the keys of ``[roles]``, are of two kinds:

* an e-mail address (``alice@lab.example``), or a name given to the command line (``--as``) or typed in a
  single user's app: compared without regard to case or surrounding spaces. A signed-in person is known by
  their e-mail only when the provider says it verified it (the ID token's ``email_verified`` is true);
* an OpenID subject, written ``<issuer>#<sub>`` (``https://login.lab.example/realms/lab#8d3f0c2e``: the
  provider's ``iss`` URL, ``#``, its ``sub`` claim): the identity of a signed-in person whose e-mail is absent or
  unverified. An issuer URL holds no ``#`` (OpenID Connect Discovery, section 3), so the form is unambiguous and
  never an e-mail; it is compared exactly (the subject's case matters), spaces around it aside.

:func:`identity_from_claims` derives the identity from a sign-in's claims; an unverified e-mail claim is never
used, so an account claiming another person's address gets neither their role nor their name.

:func:`parse_roles` / :func:`load_roles` read the file (a malformed file, an unknown role or setting raises
:class:`empathy.io.DataError` naming the file and the line and key: one line, exit 2 on the command line);
:meth:`Roles.require` is the check: it raises :class:`AccessDenied` (a :class:`PermissionError`, one line,
naming the identity, its role and the roles file). A store opened with roles
(:func:`empathy.labels.backends.open_store`) calls it on every write, with the annotator of the write as the
identity; without roles (a single user's store) nothing is checked.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from empathy.io import DataError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10 reads TOML with tomli (a dependency there)
    import tomli as tomllib

#: Environment variable naming the roles file.
ROLES_ENV = "EMPATHY_ROLES"
#: The roles, weakest first.
ROLE_NAMES: tuple[str, ...] = ("viewer", "annotator", "adjudicator")
#: The default that gives an unlisted identity no access at all.
NO_ACCESS = "none"
#: What each role may do. ``read``: see the store; ``decide``: write one's own decisions (set, import, confirm,
#: undo, skip); ``adjudicate``: resolve disagreements; ``assign``: give outputs to annotators.
RIGHTS: dict[str, frozenset[str]] = {
    "viewer": frozenset({"read"}),
    "annotator": frozenset({"read", "decide"}),
    "adjudicator": frozenset({"read", "decide", "adjudicate", "assign"}),
}
#: Actions :meth:`Roles.require` knows.
ACTIONS: tuple[str, ...] = ("read", "decide", "adjudicate", "assign")
_SETTINGS = ("default", "viewers_see_hidden", "roles")
_WHAT = {"read": "read the store", "decide": "write decisions", "adjudicate": "adjudicate",
         "assign": "assign outputs to annotators"}


class AccessDenied(PermissionError):
    """A write (or read) the identity's role does not allow; ``str(error)`` is one line and nothing was written.

    A :class:`PermissionError`, so the command line reports it as one line with exit code 2.
    """


#: Between the issuer and the subject of an OpenID subject identity (``<issuer>#<sub>``).
SUBJECT_SEPARATOR = "#"


def is_subject_identity(identity: str) -> bool:
    """Whether ``identity`` is an OpenID subject identity (``<issuer>#<sub>``, the issuer an ``http(s)`` URL)."""
    issuer, separator, subject = identity.strip().partition(SUBJECT_SEPARATOR)
    return bool(separator and subject) and re.match(r"^https?://[^\s#]+$", issuer, re.IGNORECASE) is not None


def normalise_identity(identity: object) -> str:
    """An identity as the roles file compares it (``""`` for a non-string): stripped, and an e-mail or name
    case-folded; a subject identity (``<issuer>#<sub>``) is kept exactly, since subjects are case-sensitive."""
    if not isinstance(identity, str):
        return ""
    stripped = identity.strip()
    return stripped if is_subject_identity(stripped) else stripped.casefold()


def _claimed_true(value: object) -> bool:
    """Whether a claim says true: JSON ``true`` (some providers send the string ``"true"``)."""
    return value is True or (isinstance(value, str) and value.strip().lower() == "true")


def identity_from_claims(claims: Mapping[str, object]) -> str:
    """The identity a sign-in's claims vouch for: the e-mail when ``email_verified`` is true, else
    ``<iss>#<sub>``; ``""`` when they vouch for none (no verified e-mail, and no issuer URL or subject).

    ``claims`` are the ID token's (Streamlit's ``st.user``). An e-mail the provider did not verify is never the
    identity: anyone may type any address into an account at some providers.
    """
    email = claims.get("email")
    if isinstance(email, str) and email.strip() and _claimed_true(claims.get("email_verified")):
        return email.strip()
    issuer, subject = claims.get("iss"), claims.get("sub")
    if not (isinstance(issuer, str) and isinstance(subject, str) and subject.strip()):
        return ""
    identity = f"{issuer.strip()}{SUBJECT_SEPARATOR}{subject.strip()}"
    return identity if is_subject_identity(identity) else ""


@dataclass(frozen=True)
class Roles:
    """A parsed roles file: identity -> role, the role of everyone else, and what viewers see.

    Build it with :func:`load_roles`, :func:`parse_roles` or :func:`roles_from_mapping`.
    """

    members: Mapping[str, str]
    default: str = "viewer"
    viewers_see_hidden: bool = False
    source: str = "roles"
    names: Mapping[str, str] = field(default_factory=dict)

    def role_of(self, identity: object) -> str | None:
        """The role of ``identity`` (listed, else the default); ``None`` when it has no access."""
        key = normalise_identity(identity)
        if not key:
            return None
        role = self.members.get(key, self.default)
        return None if role == NO_ACCESS else role

    def allows(self, identity: object, action: str) -> bool:
        """Whether ``identity`` may do ``action`` (one of :data:`ACTIONS`)."""
        if action not in ACTIONS:
            raise ValueError(f"action must be one of {', '.join(ACTIONS)}, got {action!r}")
        role = self.role_of(identity)
        return role is not None and action in RIGHTS[role]

    def require(self, identity: object, action: str) -> None:
        """Raise :class:`AccessDenied` (one line) unless ``identity`` may do ``action``."""
        if self.allows(identity, action):
            return
        who = identity.strip() if isinstance(identity, str) else ""
        if not who:
            raise AccessDenied(f"no identity given: sign in (or name yourself with --as) to {_WHAT[action]} in a "
                               f"store whose roles are set by {self.source}; nothing was written")
        role = self.role_of(identity)
        if role is None:
            raise AccessDenied(f"{who} has no access: not listed in {self.source}, whose default is 'none'; "
                               "nothing was written")
        needed = next(name for name in ROLE_NAMES if action in RIGHTS[name])
        raise AccessDenied(f"{who} is {_article(role)} {role} ({self.source}): only {_article(needed)} {needed} or "
                           f"above may {_WHAT[action]}; nothing was written")

    def may_see_hidden(self, identity: object) -> bool:
        """Whether ``identity`` may see what blind mode hides: annotators and adjudicators may (they choose blind
        mode themselves); viewers only when ``viewers_see_hidden``; nobody without access."""
        role = self.role_of(identity)
        if role is None:
            return False
        return role != "viewer" or self.viewers_see_hidden


def _article(role: str) -> str:
    return "an" if role[0] in "aeiou" else "a"


def _line_of(text: str, key: str, table: str | None) -> int | None:
    """The 1-based line on which ``key`` is set (inside ``[table]`` when given), for messages."""
    current: str | None = None
    pattern = re.compile(r"^\s*(?:\"((?:[^\"\\]|\\.)*)\"|'([^']*)'|([A-Za-z0-9_.-]+))\s*=")
    for number, line in enumerate(text.splitlines(), start=1):
        header = re.match(r"^\s*\[\s*([^\]]+?)\s*\]", line)
        if header:
            current = header.group(1).strip().strip("\"'")
            continue
        found = pattern.match(line)
        if found and current == table:
            name = next(group for group in found.groups() if group is not None)
            if name == key or name.replace('\\"', '"') == key:
                return number
    return None


def roles_from_mapping(mapping: Mapping[str, object], *, source: str = "roles", text: str = "") -> Roles:
    """A :class:`Roles` from parsed TOML (a file's, or the app's ``st.secrets``), every field checked.

    ``source`` names it in every message (the file's path); ``text`` (the file's text) lets a message give the
    line of a bad key. Raises :class:`empathy.io.DataError` (one line: source, line, key) for a missing
    ``[roles]`` table, an unknown setting, an unknown role, a duplicate identity or a setting of the wrong type.
    """
    if not isinstance(mapping, Mapping):
        raise DataError(source, f"a roles file is a TOML table, got {type(mapping).__name__}")
    for key in mapping:
        if key not in _SETTINGS:
            raise DataError(source, f"unknown setting (use {', '.join(_SETTINGS)})", row=_line_of(text, key, None),
                            column=str(key))
    table = mapping.get("roles")
    if not isinstance(table, Mapping):
        raise DataError(source, 'no [roles] table: list identities as [roles] "alice@lab.example" = "annotator"',
                        column="roles")
    default = mapping.get("default", "viewer")
    if default not in (*ROLE_NAMES, NO_ACCESS):
        raise DataError(source, f"unknown default role {default!r} (use {', '.join(ROLE_NAMES)} or {NO_ACCESS})",
                        row=_line_of(text, "default", None), column="default")
    hidden = mapping.get("viewers_see_hidden", False)
    if not isinstance(hidden, bool):
        raise DataError(source, f"viewers_see_hidden must be true or false, got {hidden!r}",
                        row=_line_of(text, "viewers_see_hidden", None), column="viewers_see_hidden")
    members: dict[str, str] = {}
    names: dict[str, str] = {}
    for identity, role in table.items():
        where = {"row": _line_of(text, identity, "roles"), "column": f"roles.{identity}"}
        key = normalise_identity(identity)
        if not key:
            raise DataError(source, "empty identity", **where)
        if role not in ROLE_NAMES:
            raise DataError(source, f"unknown role {role!r} for {identity!r} (use {', '.join(ROLE_NAMES)})", **where)
        if key in members:
            raise DataError(source, f"{identity!r} is listed twice (also as {names[key]!r}; identities ignore "
                            "case)", **where)
        members[key] = role
        names[key] = identity
    return Roles(members, default, hidden, source, names)


def parse_roles(text: str, *, source: str = "roles") -> Roles:
    """A :class:`Roles` from the text of a roles file (see :func:`roles_from_mapping` for what is checked).

    Raises :class:`empathy.io.DataError` naming ``source`` for text that is not TOML (with TOML's line and
    column).
    """
    try:
        mapping = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise DataError(source, f"not valid TOML ({error})") from None
    return roles_from_mapping(mapping, source=source, text=text)


def load_roles(path: str | Path) -> Roles:
    """The roles file at ``path`` (:class:`empathy.io.DataError` when missing, unreadable or malformed)."""
    path = Path(path).expanduser()
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise DataError(str(path), "roles file not found") from None
    except UnicodeDecodeError as error:
        raise DataError(str(path), f"not UTF-8 text (byte {error.start})") from None
    except OSError as error:
        raise DataError(str(path), f"cannot read the roles file ({error.strerror or error})") from None
    return parse_roles(text, source=str(path))


def roles_from_env(given: str | Path | None = None) -> Roles | None:
    """The roles file ``given``, else ``$EMPATHY_ROLES``; ``None`` when neither names one (no checks)."""
    named = str(given).strip() if given is not None else os.environ.get(ROLES_ENV, "").strip()
    return load_roles(named) if named else None
