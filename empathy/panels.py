"""Rater panels (the mean of the experts, of the LLMs) and their agreement with each other and the crowd.

A *panel* is a named set of raters; :func:`panel_ratings` adds one pseudo-rater per panel, ``panel:<name>``,
whose value on an (item, model, dimension) is the mean of the values its members gave there. The pairwise
statistics then come from :func:`empathy.agreement.pairwise_agreement` unchanged, so a panel is compared
exactly as a single rater would be.

Choices (also in docs/kumar2025.md, "Workbench"):

* **Default panels** (``panels=None``): the raters are grouped by ``rater_kind``: ``expert`` -> ``experts``,
  ``llm`` -> ``llms``, and any other kind with at least two raters -> its name plus ``s`` (``humans``,
  ``lexicons``, ``authors``). ``crowd`` never forms a panel: a crowd rating is already an aggregate, and it
  is the comparison the panels are measured against. A panel needs at least two members.
* **Missing members**: the panel value is the mean of the members that rated the unit (NaN ratings are
  skipped, never read as 0); ``reason`` records how many members it rests on. A unit no member rated gets
  no panel row.
* **Kappa for panel means**: a mean of whole-number labels is usually fractional, and Cohen's kappa needs
  categories. ``kappa`` and ``kappa_quadratic`` therefore stay as :func:`pairwise_agreement` computes them
  (``None`` when either side is fractional), and :func:`compare_panels` adds ``kappa_quadratic_rounded``:
  quadratic kappa after rounding both sides half up to whole numbers, computed only on dimensions whose
  *individual* raters (not crowd, not panels) all give whole numbers, i.e. an integer scale such as 0-2 or
  1-5. On continuous dimensions (affect intensity in [0, 1]) it is ``None``, since rounding would invent
  categories. Spearman (with its bootstrap interval) and Pearson are the primary statistics for panels.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from empathy.agreement import (
    DEFAULT_BOOTSTRAP,
    DEFAULT_CONFIDENCE,
    DEFAULT_SEED,
    cohen_kappa,
    pairwise_agreement,
)

PANEL_PREFIX = "panel:"
#: Panel name of each rater kind when panels are formed from ``rater_kind``.
KIND_PANELS: dict[str, str] = {"expert": "experts", "llm": "llms"}
#: Kinds that never form a panel (already aggregates, or not a kind at all).
NO_PANEL_KINDS: frozenset[str] = frozenset({"crowd", ""})
MIN_PANEL_MEMBERS = 2


def panel_name(name: str) -> str:
    """The rater name of a panel: ``panel:<name>``."""
    return name if name.startswith(PANEL_PREFIX) else f"{PANEL_PREFIX}{name}"


def is_panel(rater: str) -> bool:
    """Whether ``rater`` is a panel pseudo-rater added by :func:`panel_ratings`."""
    return str(rater).startswith(PANEL_PREFIX)


def default_panels(ratings: pd.DataFrame) -> dict[str, list[str]]:
    """Panels from ``rater_kind``: experts, llms, and any other kind with two or more raters (not crowd)."""
    if "rater_kind" not in ratings.columns or ratings.empty:
        return {}
    kinds = (ratings.loc[~ratings["rater"].map(is_panel), ["rater", "rater_kind"]]
             .fillna({"rater_kind": ""}).drop_duplicates())
    panels: dict[str, list[str]] = {}
    for kind, part in kinds.groupby("rater_kind", sort=True):
        kind = str(kind)
        if kind in NO_PANEL_KINDS:
            continue
        members = sorted(set(part["rater"]))
        if len(members) >= MIN_PANEL_MEMBERS:
            panels[KIND_PANELS.get(kind, f"{kind}s")] = members
    return panels


def _check_panels(ratings: pd.DataFrame, panels: Mapping[str, Sequence[str]]) -> dict[str, list[str]]:
    known = set(ratings["rater"])
    checked: dict[str, list[str]] = {}
    for name, members in panels.items():
        if not isinstance(name, str) or not name.strip():
            raise ValueError(f"panel names must be non-empty strings, got {name!r}")
        if isinstance(members, str):
            raise TypeError(f"panel {name!r}: members must be a sequence of rater names, not the string "
                            f"{members!r}")
        members = list(dict.fromkeys(members))
        unknown = [m for m in members if m not in known]
        if unknown:
            raise ValueError(f"panel {name!r}: unknown rater(s) {unknown}; raters are {sorted(known)}")
        if len(members) < 1:
            raise ValueError(f"panel {name!r} has no members")
        checked[name] = members
    return checked


def panel_ratings(ratings: pd.DataFrame, panels: Mapping[str, Sequence[str]] | None = None) -> pd.DataFrame:
    """``ratings`` plus one pseudo-rater ``panel:<name>`` per panel: the members' mean per unit and dimension.

    Parameters
    ----------
    ratings
        Long ratings (``item_id, model, rater, dimension, value`` and optionally ``rater_kind``).
    panels
        Panel name -> member raters. ``None`` forms panels from ``rater_kind`` (:func:`default_panels`).

    Returns
    -------
    DataFrame
        The input rows followed by the panel rows. A panel row's ``rater_kind`` is its members' kind when
        they share one (so the table still validates with :func:`empathy.io.validate_ratings`), else
        empty; ``reason`` says how many members it averages; ``signature`` names the members.
    """
    for column in ("item_id", "model", "rater", "dimension", "value"):
        if column not in ratings.columns:
            raise ValueError(f"panel_ratings: ratings lack the column {column!r}")
    chosen = default_panels(ratings) if panels is None else _check_panels(ratings, panels)
    parts = [ratings]
    for name, members in chosen.items():
        member_rows = ratings[ratings["rater"].isin(members)]
        present = member_rows.dropna(subset=["value"])
        if present.empty:
            continue
        grouped = present.groupby(["item_id", "model", "dimension"], sort=True)["value"]
        means = grouped.mean().rename("value").reset_index()
        counts = grouped.size().to_numpy()
        kinds = set(member_rows["rater_kind"].fillna("")) if "rater_kind" in member_rows.columns else {""}
        means["rater"] = panel_name(name)
        means["rater_kind"] = kinds.pop() if len(kinds) == 1 else ""
        means["reason"] = [f"mean of {c} of {len(members)} panel members" for c in counts]
        means["signature"] = f"panel({','.join(members)})"
        parts.append(means[[c for c in ratings.columns if c in means.columns]])
    out = pd.concat(parts, ignore_index=True)
    return out


def integer_scale_dimensions(ratings: pd.DataFrame) -> set[str]:
    """Dimensions on which every individual rater (not crowd, not a panel) gives whole numbers only."""
    individual = ratings[~ratings["rater"].map(is_panel)]
    if "rater_kind" in individual.columns:
        individual = individual[individual["rater_kind"].fillna("") != "crowd"]
    out = set()
    for dimension, values in individual.dropna(subset=["value"]).groupby("dimension")["value"]:
        array = values.to_numpy(dtype=float)
        if len(array) and np.all(array == np.floor(array)):
            out.add(str(dimension))
    return out


def round_half_up(values: np.ndarray) -> np.ndarray:
    """Round to whole numbers with halves going up (2.5 -> 3), unlike numpy's round-half-to-even."""
    return np.floor(np.asarray(values, dtype=float) + 0.5)


def _rounded_kappa(ratings: pd.DataFrame, dimension: str, rater_a: str, rater_b: str,
                   integer_dims: set[str]) -> float | None:
    """Quadratic kappa of two raters after rounding half up, on whole-number dimensions only."""
    if dimension not in integer_dims:
        return None
    subset = ratings[(ratings["dimension"] == dimension) & ratings["rater"].isin([rater_a, rater_b])]
    wide = subset.set_index(["item_id", "model", "rater"])["value"].unstack("rater")
    if rater_a not in wide.columns or rater_b not in wide.columns:
        return None
    return cohen_kappa(round_half_up(wide[rater_a].to_numpy()), round_half_up(wide[rater_b].to_numpy()),
                       weights="quadratic")


def comparison_raters(ratings: pd.DataFrame) -> list[str]:
    """The raters a panel comparison covers: every panel and every crowd rater."""
    raters = sorted(r for r in ratings["rater"].unique() if is_panel(r))
    if "rater_kind" in ratings.columns:
        crowd = ratings.loc[(ratings["rater_kind"].fillna("") == "crowd") & ~ratings["rater"].map(is_panel),
                            "rater"]
        raters += sorted(set(crowd))
    return raters


def compare_panels(ratings: pd.DataFrame, panels: Mapping[str, Sequence[str]] | None = None, *,
                   dimensions: Sequence[str] | None = None, bootstrap: int = DEFAULT_BOOTSTRAP,
                   seed: int = DEFAULT_SEED, confidence: float = DEFAULT_CONFIDENCE,
                   include_crowd: bool = True) -> pd.DataFrame:
    """Agreement of the panels with each other and with the crowd, per dimension.

    The panels are added with :func:`panel_ratings` (``ratings`` may already hold them; then ``panels``
    should be ``None`` and the existing ``panel:*`` raters are used as they are). Statistics come from
    :func:`empathy.agreement.pairwise_agreement` (Spearman with a percentile bootstrap interval when
    ``bootstrap > 0``, Pearson, kappa as defined there), plus ``kappa_quadratic_rounded`` (see the module
    docstring for when it is defined).

    Returns
    -------
    DataFrame
        Columns dimension, rater_a, rater_b, n, spearman, spearman_low, spearman_high, pearson, kappa,
        kappa_quadratic, kappa_quadratic_rounded, percent_agreement (the interval columns only with
        ``bootstrap > 0``). Empty when there are fewer than two raters to compare.
    """
    has_panels = ratings["rater"].map(is_panel).any()
    table = ratings if has_panels and panels is None else panel_ratings(
        ratings[~ratings["rater"].map(is_panel)], panels)
    raters = comparison_raters(table) if include_crowd else sorted(
        r for r in table["rater"].unique() if is_panel(r))
    pairs = pairwise_agreement(table, dimensions=dimensions, raters=raters, bootstrap=bootstrap, seed=seed,
                               confidence=confidence)
    integer_dims = integer_scale_dimensions(table)
    rounded = [_rounded_kappa(table, row.dimension, row.rater_a, row.rater_b, integer_dims)
               for row in pairs.itertuples(index=False)]
    pairs.insert(pairs.columns.get_loc("kappa_quadratic") + 1, "kappa_quadratic_rounded", rounded)
    if bootstrap:
        order = ["dimension", "rater_a", "rater_b", "n", "spearman", "spearman_low", "spearman_high"]
        pairs = pairs[order + [c for c in pairs.columns if c not in order]]
    return pairs


def rater_vs_panel(ratings: pd.DataFrame, panel: str, *, raters: Sequence[str] | None = None,
                   dimensions: Sequence[str] | None = None, bootstrap: int = 0, seed: int = DEFAULT_SEED
                   ) -> pd.DataFrame:
    """Agreement of individual raters with a panel (e.g. each LLM with ``panel:experts``), per dimension.

    ``ratings`` must already hold the panel (see :func:`panel_ratings`); a rater that is a member of the
    panel is compared with the panel as it stands (the caller decides whether to leave it out first).
    Columns as :func:`empathy.agreement.pairwise_agreement`, with ``rater`` and ``panel`` instead of
    ``rater_a``/``rater_b``, plus ``kappa_quadratic_rounded`` (both sides rounded half up, on whole-number
    scales only; see the module docstring).
    """
    name = panel_name(panel)
    if name not in set(ratings["rater"]):
        raise ValueError(f"rater_vs_panel: no rater {name!r} in the ratings; add it with panel_ratings()")
    chosen = [r for r in (raters if raters is not None else sorted(ratings["rater"].unique()))
              if r != name and not is_panel(r)]
    integer_dims = integer_scale_dimensions(ratings)
    parts = []
    for rater in chosen:
        pairs = pairwise_agreement(ratings, dimensions=dimensions, raters=[rater, name], bootstrap=bootstrap,
                                   seed=seed)
        if pairs.empty:
            continue
        # pairwise_agreement orders each pair by name; put the individual rater first whatever the names.
        pairs = pairs.assign(rater=rater, panel=name).drop(columns=["rater_a", "rater_b"])
        pairs.insert(pairs.columns.get_loc("kappa_quadratic") + 1, "kappa_quadratic_rounded",
                     [_rounded_kappa(ratings, d, rater, name, integer_dims) for d in pairs["dimension"]])
        parts.append(pairs)
    if not parts:
        return pd.DataFrame(columns=["dimension", "rater", "panel", "n", "spearman", "pearson", "kappa",
                                     "kappa_quadratic", "kappa_quadratic_rounded", "percent_agreement"])
    out = pd.concat(parts, ignore_index=True)
    front = ["dimension", "rater", "panel"]
    return out[front + [c for c in out.columns if c not in front]]
