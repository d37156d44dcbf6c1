"""Prediction-powered estimates: a judge's metric corrected by a random human audit, with valid intervals.

A judge rates every output; humans decide a random sample of them (:mod:`empathy.audit`). Three estimates of
a model's metric then exist side by side:

* **judge** — the metric under the judge on every output of the frame (what the Overview shows today);
* **human** — the mean of the human terms on the audited outputs alone: unbiased, but resting on ``n_audit``
  outputs only;
* **ppi** — PPI++ (Angelopoulos, Duchi & Zrnic 2023, *PPI++: Efficient Prediction-Powered Inference*,
  arXiv:2311.01453; Angelopoulos et al., *Science* 382, 2023): the judge's mean on the outputs nobody audited,
  corrected by the judge's mean error on the audited ones, with the power-tuning weight ``lambda`` that makes
  it never worse (asymptotically) than the human-only estimate.

The estimator (:func:`ppi_mean`, equal to ``ppi_py.ppi_mean_pointestimate`` / ``ppi_mean_ci`` with
``lam=None`` to 1e-9, tested): with ``Y`` the human terms and ``f`` the judge's terms on the ``n`` audited
outputs and ``f~`` the judge's terms on the ``N`` others,

* ``lambda = clip(cov(Y, f) / ((1 + n/N) var(f, f~)), 0, 1)``, ``cov`` with divisor ``n`` over the audited
  outputs, ``var`` the sample variance (divisor ``n + N - 1``) of the judge's terms on all ``n + N`` outputs;
* ``theta = lambda mean(f~) + mean(Y - lambda f)``;
* ``se^2 = var0(lambda f~) / N + var0(Y - lambda f) / n`` (``var0``: divisor the count), and the 95 % interval
  ``theta +- z se`` with ``z`` the normal quantile (a normal approximation: it needs a few dozen audited outputs
  per row; see docs/statistics.md).

Where ``ppi_py`` returns NaN we choose: a judge whose terms are all equal (``var = 0``) carries no information,
so ``lambda = 0`` (the human-only estimate); with every output of a row audited (``N = 0``) the estimate is the
human mean (``lambda = 0``). Fewer than two audited outputs: no estimate (``None``).

The **human-only** interval is the same normal interval ``mean(Y) +- z sd0(Y)/sqrt(n)`` (``ppi_py``'s
``classical_mean_ci``), so that the two widths compare like with like. ``n_effective`` =
``n_audit (width_human / width_ppi)^2``: the number of human decisions a human-only estimate would need for the
PPI interval's width; ``ess_gain`` = ``n_effective / n_audit``.

Which outputs are which. The target is the model's mean *human* term over outputs like those in the frame
(a super-population mean, as the bootstrap intervals of :mod:`empathy.bootstrap`). The audited set is the
drawn outputs that have a human decision and whose two terms are usable; the unlabelled set is every other
output of the frame (drawn-but-pending ones included) with a usable judge term. They are independent samples
of the frame only if the decided outputs are a random subset of it: true for any prefix of the audit order
(:mod:`empathy.audit`), so ``n_skipped`` counts the drawn outputs left undecided before the last decided one.

Terms and partial decisions. The terms come from the metric's own terms function
(:data:`empathy.metrics.METRIC_SPECS`; every judged metric whose aggregate is the mean of its terms and which
reads the audited dimension: SA for ``e_ref``/``e_gen``, EGM for ``u_ref``/``u_gen``, CA for ``ca``). An audit
decides *one* dimension; a metric reading two (SA needs ``e_ref`` and ``e_gen``) gets its human term from the
human's value of the audited dimension and the judge's value of the others. The estimate is then valid for
*that* quantity — e.g. SA with the judge's reference intensity and the humans' generation intensity — and not
for an SA fully rated by humans; the judge's error on the dimensions nobody audited stays in it.

Missing and undefined terms enter as the metric treats them: an output whose judge term is not usable (a
missing rating, SA with ``E(t) = 0``, EGM with no sentences or, with ``both_zero="exclude"``, ``a + b = 0``) is
left out of the unlabelled set; an audited output whose human *or* judge term is not usable is left out of the
audited set (``n_unusable``). The estimand is thus the mean over outputs with usable terms, as the metric's;
when the human's decision makes a term undefined where the judge's was not (only EGM with ``exclude``), the two
populations differ slightly, which ``n_unusable`` shows.

Strata. With a design stratified by task, each (model, task) stratum has its own PPI estimate (rows with
``scheme`` ``srs``) and the model's pooled value is ``sum_h W_h theta_h`` with ``W_h`` the stratum's share of
the model's usable judge terms and ``se^2 = sum_h W_h^2 se_h^2`` (``scheme`` ``stratified``). Without
stratification the pooled row is one simple random sample (``srs``) and each task's row is a domain of it
(``domain``: valid conditionally on the number of audited outputs that fell in the task).

The judge's ratings passed in must be the judge's *own* ratings, never ratings with the human overrides
applied: on an audited output those equal the human's value and the correction would vanish. The judge must
not have been tuned on the audit's decisions.

The label budget (:func:`empathy.label_budget.label_budget`) projects these variances to more decisions
(:func:`projected_se`).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

from empathy import metrics as m
from empathy.audit import NO_TASK, AuditDesign, audit_frame, frame_digest
from empathy.distributions import normal_ppf
from empathy.io import left_join, require_frame
from empathy.small_sample import (
    MIN_AUDIT,
    clopper_pearson,
    guarded_interval,
    satterthwaite_df,
    small_audit_warning,
    t_quantile,
    widened_warning,
    zero_width_warning,
)

DEFAULT_CONFIDENCE = 0.95
#: Task label of rows pooled over tasks (as :func:`empathy.evaluate.compute_metrics`).
ALL_TASKS = "all"
ESTIMATOR = "ppi++"
PPI_COLUMNS: tuple[str, ...] = (
    "task", "model", "metric", "judge", "scheme", "n_frame", "n_drawn", "n_decided", "n_audit", "n_unusable",
    "n_pending", "n_skipped", "judge_value", "human_value", "human_low", "human_high", "ppi_value", "ppi_low",
    "ppi_high", "ppi_se", "lam", "n_effective", "ess_gain", "n_undefined", "warning")
COMPONENT_COLUMNS: tuple[str, ...] = ("task", "model", "metric", "n", "n_unlabelled", "cov", "var_y", "var_f_labelled",
                                      "var_f_unlabelled", "var_f_all")


def _z(confidence: float) -> float:
    """Two-sided normal quantile, computed as statsmodels' ``_zconfint_generic`` does (``1 - alpha/2``)."""
    if isinstance(confidence, bool) or not isinstance(confidence, (int, float)) or not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")
    return _normal_quantile(float(confidence))


@functools.lru_cache(maxsize=64)
def _normal_quantile(confidence: float) -> float:
    # the quantile costs more than the rest of a small PPI estimate, which simulations call thousands of times
    alpha = 1.0 - confidence
    return normal_ppf(1.0 - alpha / 2.0)


def _vector(values: ArrayLike, name: str) -> NDArray[np.float64]:
    array = m._as_float_array(values, name)  # the metrics' check: numeric, one-dimensional
    if not np.isfinite(array).all():
        position = int(np.flatnonzero(~np.isfinite(array))[0])
        raise ValueError(f"{name}[{position}] = {float(array[position])!r} is not a finite number")
    return array


@dataclass(frozen=True)
class MeanEstimate:
    """A mean with its interval ``[low, high]`` and standard error (the interval need not be symmetric)."""

    value: float
    low: float
    high: float
    se: float
    n: int

    @property
    def width(self) -> float:
        """The interval's width ``high - low``."""
        return self.high - self.low


#: ``interval`` of :func:`ppi_mean`: the small-sample intervals (the default) or ppi-python's normal ones.
SMALL_SAMPLE, NORMAL = "small-sample", "normal"


@dataclass(frozen=True)
class PPIMean:
    """The PPI++ mean of one row, the human-only mean beside it, and the variance pieces they rest on.

    ``cov``, ``var_y`` and ``var_f_labelled`` are over the ``n`` audited outputs (divisor ``n``),
    ``var_f_unlabelled`` over the ``n_unlabelled`` others (divisor their count), ``var_f_all`` the sample
    variance (divisor ``n + n_unlabelled - 1``) of the judge's terms on both; :func:`projected_se` projects them.
    ``warning`` says why an interval's level is not promised, or how it was made safe (``None``: neither).
    """

    estimate: MeanEstimate
    human: MeanEstimate
    lam: float
    n: int
    n_unlabelled: int
    cov: float
    var_y: float
    var_f_labelled: float
    var_f_unlabelled: float
    var_f_all: float
    warning: str | None = None

    @property
    def n_effective(self) -> float | None:
        """``n (width_human / width_ppi)^2``: human decisions alone needed for the PPI interval's width."""
        if self.estimate.width <= 0 or self.human.width <= 0:
            return None
        return self.n * (self.human.width / self.estimate.width) ** 2


def optimal_lambda(n: int, n_unlabelled: int, cov: float, var_f_all: float) -> float:
    """PPI++'s power-tuning weight ``clip(cov / ((1 + n/N) var_f_all), 0, 1)``; 0 when ``N = 0`` or ``var = 0``.

    Parameters
    ----------
    n, n_unlabelled : int
        Audited and unaudited outputs (``n >= 1``, ``N >= 0``).
    cov, var_f_all : float
        ``cov(Y, f)`` over the audited outputs (divisor ``n``) and the sample variance of the judge's terms on all.

    Raises
    ------
    ValueError
        For sizes out of range or a non-finite ``cov`` / ``var_f_all``.
    """
    if n < 1 or n_unlabelled < 0 or not (math.isfinite(cov) and math.isfinite(var_f_all)):
        raise ValueError(f"optimal_lambda: need n >= 1, N >= 0 and finite moments, got n={n}, N={n_unlabelled}, "
                         f"cov={cov}, var={var_f_all}")
    if n_unlabelled == 0 or var_f_all <= 0:
        return 0.0
    return float(np.clip(cov / ((1.0 + n / n_unlabelled) * var_f_all), 0.0, 1.0))


def _ppi_se(lam: float, var_f_unlabelled: float, big_n: int, var_rectifier: float, n: int, ddof: int
            ) -> tuple[float, float]:
    """PPI's standard error and its Welch-Satterthwaite degrees of freedom from divisor-count variances, with the
    ``ddof`` 0 (ppi-python's) or 1 (unbiased) reading of each piece."""
    imputed = lam * lam * var_f_unlabelled * big_n / (big_n - ddof) / big_n if big_n > ddof else 0.0
    audited = var_rectifier * n / (n - ddof) / n
    df = satterthwaite_df([(imputed, big_n - 1.0 if big_n > 1 else math.inf), (audited, n - 1.0)])
    return math.sqrt(imputed + audited), df


def ppi_mean(y: ArrayLike, yhat: ArrayLike, yhat_unlabelled: ArrayLike, *, confidence: float = DEFAULT_CONFIDENCE,
             lam: float | None = None, binary: bool = False, interval: str = SMALL_SAMPLE) -> PPIMean:
    """The PPI++ estimate of a mean with its interval (power-tuned unless ``lam`` is given).

    Parameters
    ----------
    y : array_like
        Human terms of the ``n`` audited outputs.
    yhat : array_like
        The judge's terms of the same outputs, row-aligned with ``y``.
    yhat_unlabelled : array_like
        The judge's terms of the ``N`` outputs nobody audited (may be empty).
    confidence : float
        Nominal coverage of the intervals.
    lam : float, optional
        A fixed weight in [0, 1] (1: PPI without tuning, 0: the human-only mean); ``None`` tunes it.
    binary : bool
        The terms are shares (every value 0 or 1, e.g. CA): the human-only interval is Clopper-Pearson and PPI's
        is guarded by it (:func:`empathy.small_sample.guarded_interval`).
    interval : str
        ``"small-sample"`` (the default; :mod:`empathy.small_sample`) or ``"normal"``: ppi-python's
        ``ppi_mean_ci`` and ``classical_mean_ci`` (``value +- z se`` with divisor-``n`` variances), which
        undercover at the sizes audits have; kept to compare with the reference implementation.

    Returns
    -------
    PPIMean
        See the module docstring for the formulas (the point estimate and ``lambda`` those of ``ppi_py`` 0.2.3).

    Raises
    ------
    TypeError, ValueError
        For non-numeric or non-finite values, ``y`` and ``yhat`` of different lengths, fewer than two audited
        outputs, a ``lam`` outside [0, 1], a ``confidence`` outside (0, 1), an unknown ``interval``, or ``binary``
        terms other than 0 and 1.
    """
    z = _z(confidence)
    if interval not in (SMALL_SAMPLE, NORMAL):
        raise ValueError(f"interval must be {SMALL_SAMPLE!r} or {NORMAL!r}, got {interval!r}")
    labels = _vector(y, "y")
    predicted = _vector(yhat, "yhat")
    unlabelled = _vector(yhat_unlabelled, "yhat_unlabelled")
    if len(labels) != len(predicted):
        raise ValueError(f"y and yhat differ in length: {len(labels)} vs {len(predicted)}")
    n, big_n = len(labels), len(unlabelled)
    if n < 2:
        raise ValueError(f"a PPI estimate needs at least 2 audited outputs, got {n}")
    if binary:
        for name, values in (("y", labels), ("yhat", predicted), ("yhat_unlabelled", unlabelled)):
            if not np.isin(values, (0.0, 1.0)).all():
                raise ValueError(f"binary terms must be 0 or 1: {name} holds "
                                 f"{float(values[~np.isin(values, (0.0, 1.0))][0])!r}")
    cov = float(np.mean((labels - labels.mean()) * (predicted - predicted.mean())))
    var_all = float(np.var(np.concatenate([predicted, unlabelled]), ddof=1))
    if lam is None:
        lam = optimal_lambda(n, big_n, cov, var_all)
    elif isinstance(lam, bool) or not isinstance(lam, (int, float)) or not 0.0 <= lam <= 1.0:
        raise ValueError(f"lam must be None or a number in [0, 1], got {lam!r}")
    lam = float(lam) if big_n else 0.0
    rectifier = labels - lam * predicted
    value = float(rectifier.mean() + (lam * unlabelled.mean() if big_n else 0.0))
    var_unlabelled = float(np.var(unlabelled)) if big_n else 0.0
    human_mean = float(labels.mean())
    pieces = {"lam": lam, "n": n, "n_unlabelled": big_n, "cov": cov, "var_y": float(np.var(labels)),
              "var_f_labelled": float(np.var(predicted)), "var_f_unlabelled": var_unlabelled, "var_f_all": var_all}
    if interval == NORMAL:
        se, _ = _ppi_se(lam, var_unlabelled, big_n, float(np.var(rectifier)), n, 0)
        human_se = float(np.std(labels)) / math.sqrt(n)
        return PPIMean(estimate=MeanEstimate(value, value - z * se, value + z * se, se, n),
                       human=MeanEstimate(human_mean, human_mean - z * human_se, human_mean + z * human_se, human_se,
                                          n), **pieces)
    se, df = _ppi_se(lam, var_unlabelled, big_n, float(np.var(rectifier)), n, 1)
    half = t_quantile(confidence, df) * se if se > 0 else 0.0
    low, high = value - half, value + half
    human_se = float(np.std(labels, ddof=1)) / math.sqrt(n)
    warnings: list[str] = []
    if binary:
        successes = int(labels.sum())
        human_low, human_high = clopper_pearson(successes, n, confidence)
        low, high, widened = guarded_interval(low, high, successes=successes, n=n,
                                              discordant=int((labels != predicted).sum()), confidence=confidence)
        if widened:
            warnings.append(widened_warning(n))
        low, high = max(low, 0.0), min(high, 1.0)  # a share lies in [0, 1]: clipping loses no coverage
    else:
        human_half = t_quantile(confidence, n - 1) * human_se
        human_low, human_high = human_mean - human_half, human_mean + human_half
        if n < MIN_AUDIT:
            warnings.append(small_audit_warning(n, "the PPI and human-only intervals each"))
        if high <= low:
            warnings.append(zero_width_warning("the PPI interval"))
        if human_high <= human_low:
            warnings.append(zero_width_warning("the human-only interval"))
    return PPIMean(estimate=MeanEstimate(value, low, high, se, n),
                   human=MeanEstimate(human_mean, human_low, human_high, human_se, n),
                   warning="; ".join(warnings) or None, **pieces)


def projected_se(result: PPIMean, extra: int) -> float:
    """The standard error :func:`ppi_mean` would have after ``extra`` more audited outputs, other things equal.

    ``extra`` outputs move from the unlabelled to the audited set (``n + extra``, ``N - extra``); ``lambda`` is
    re-tuned for the new sizes and the variances are the current estimates, read unbiased as the small-sample
    interval reads them: ``se^2 = lambda^2 var_f~ / (N' - 1) + (var_y - 2 lambda cov + lambda^2 var_f) / (n' - 1)``
    (divisor-count variances). With ``extra = 0`` this is the current small-sample ``se`` exactly.
    """
    if isinstance(extra, bool) or not isinstance(extra, (int, np.integer)) or not 0 <= extra <= result.n_unlabelled:
        raise ValueError(f"extra must be a whole number in [0, {result.n_unlabelled}], got {extra!r}")
    n, big_n = result.n + int(extra), result.n_unlabelled - int(extra)
    lam = optimal_lambda(n, big_n, result.cov, result.var_f_all)
    rectifier = max(result.var_y - 2 * lam * result.cov + lam * lam * result.var_f_labelled, 0.0)
    se, _ = _ppi_se(lam, result.var_f_unlabelled, big_n, rectifier, n, 1)
    return se


# ------------------------------------------------------------------------------------------ the table


def ppi_metrics(spec_names: Sequence[str] | None, dimension: str) -> list[m.MetricSpec]:
    """The registry's metrics an audit of ``dimension`` corrects: judged, not grouped, mean of their terms.

    ``spec_names`` narrows the choice (each must be such a metric reading ``dimension``). Raises ValueError
    naming the metric that does not qualify, or when no metric reads ``dimension``.
    """
    eligible = [spec for spec in m.METRIC_SPECS.values()
                if spec.judged and not spec.grouped and spec.aggregate is m.aggregate and dimension in spec.dimensions]
    if spec_names is None:
        if not eligible:
            raise ValueError(f"no metric that is a mean of per-item judge terms reads dimension {dimension!r}; "
                             f"such metrics read {sorted({d for s in m.METRIC_SPECS.values() for d in s.dimensions})}")
        return eligible
    chosen = []
    for name in spec_names:
        spec = m.get_metric(name)
        if spec not in eligible:
            raise ValueError(f"metric {name!r} cannot be corrected by an audit of {dimension!r}: it must read that "
                             "dimension and be a mean of per-item judge terms")
        chosen.append(spec)
    return chosen


def _decisions(decisions: pd.DataFrame, design: AuditDesign) -> tuple[pd.DataFrame, int]:
    """The decisions on drawn outputs (item_id, model, value, position) and how many others were ignored."""
    require_frame(decisions, ("item_id", "model", "value"), "decisions")
    part = decisions
    if "dimension" in part.columns:
        part = part[part["dimension"].astype(str) == design.dimension]
    part = part.astype({"item_id": str, "model": str})
    part = part[part["value"].notna()]
    numbers = pd.to_numeric(part["value"], errors="coerce")
    if numbers.isna().any():
        bad = part[numbers.isna()].iloc[0]
        raise ValueError(f"decision on output ({bad['item_id']!r}, {bad['model']!r}): value {bad['value']!r} is not "
                         "a number")
    part = part.assign(value=numbers.astype(float))
    if part.duplicated(["item_id", "model"]).any():
        key = tuple(part.loc[part.duplicated(["item_id", "model"]), ["item_id", "model"]].iloc[0])
        raise ValueError(f"decisions hold output {key} twice on {design.dimension!r}: resolve them to one label "
                         "per output first (empathy.overrides.effective_overrides)")
    dimension = m.DIMENSIONS.get(design.dimension)
    if dimension is not None:
        for item, model, value in zip(part["item_id"], part["model"], part["value"], strict=True):
            problem = dimension.problem(value)
            if problem:
                raise ValueError(f"decision on output ({item!r}, {model!r}): {design.dimension} = {value!r} {problem}")
    drawn = pd.DataFrame([(o.item_id, o.model, o.position) for o in design.outputs],
                         columns=["item_id", "model", "position"])
    kept = part[["item_id", "model", "value"]].merge(drawn, on=["item_id", "model"], how="inner")
    return kept.astype({"value": float}), len(part) - len(kept)


def _unique_rater(ratings: pd.DataFrame) -> str:
    name = "(audit decisions)"
    taken = set(ratings["rater"].astype(str).unique())
    while name in taken:
        name += "'"
    return name


def _terms(outputs: pd.DataFrame, ratings: pd.DataFrame, design: AuditDesign, decided: pd.DataFrame,
           spec: m.MetricSpec, sentences: pd.DataFrame | None, egm_both_zero: str) -> pd.DataFrame:
    """Per frame output: the judge's term and usability, and for decided outputs the human term and usability.

    Both come from :func:`empathy.stability.metric_terms` (the metric's terms function): the human's rows are
    the judge's rows of the metric's dimensions on the decided outputs with the audited dimension replaced by
    the decision.
    """
    from empathy.stability import metric_terms  # the one implementation of "terms of a judge metric"

    judge_rows = ratings[(ratings["rater"].astype(str) == design.judge)
                         & ratings["dimension"].astype(str).isin(spec.dimensions)]
    judge_rows = judge_rows[["item_id", "model", "rater", "dimension", "value"]].astype(
        {"item_id": str, "model": str, "rater": str, "dimension": str})
    human = _unique_rater(ratings)
    copied = judge_rows.merge(decided[["item_id", "model", "value"]].rename(columns={"value": "decision"}),
                              on=["item_id", "model"], how="inner")
    copied = copied.assign(rater=human, value=np.where(copied["dimension"] == design.dimension,
                                                       copied["decision"], copied["value"]))
    combined = pd.concat([judge_rows, copied.drop(columns="decision")], ignore_index=True)
    keys = outputs[["item_id", "model"]].astype(str)
    terms = metric_terms(keys, combined, spec.name, sentences=sentences, egm_both_zero=egm_both_zero)
    usable = terms["status"] == m.OK
    judge = terms[terms["judge"] == design.judge].assign(f_ok=usable)[["item_id", "model", "term", "f_ok"]]
    mine = terms[terms["judge"] == human].assign(y_ok=usable)[["item_id", "model", "term", "y_ok"]]
    return judge.rename(columns={"term": "f"}).merge(mine.rename(columns={"term": "y"}), on=["item_id", "model"],
                                                     how="left")


@dataclass(frozen=True)
class PPIReport:
    """PPI++ estimates beside the judge-only and human-only values, per (task, model, metric).

    ``table`` has :data:`PPI_COLUMNS`; ``components`` (:data:`COMPONENT_COLUMNS`) the variance pieces of every
    ``srs``/``domain`` row, which :func:`empathy.label_budget.label_budget` projects. ``n_ignored`` counts
    decisions on outputs the audit did not draw (never used).
    """

    table: pd.DataFrame
    components: pd.DataFrame = field(repr=False)
    design: AuditDesign
    confidence: float
    n_ignored: int

    def signature_fields(self) -> dict[str, str]:
        """Estimator, audit design (digest, judge, dimension), decisions used and the confidence level."""
        pooled = self.table[self.table["task"] == ALL_TASKS]
        used = int(pooled.groupby("metric")["n_decided"].sum().max()) if len(pooled) else 0
        return {"estimator": ESTIMATOR, **self.design.signature_fields(), "audit-decisions": str(used),
                "confidence": f"{self.confidence:g}"}

    def estimator_rows(self) -> pd.DataFrame:
        """One row per (task, model, metric, estimator) with ``estimator`` judge, human or ppi: the long form the
        command line's ``metrics`` rows take (value, ci_low, ci_high, n, n_audit). The judge's rows carry no
        interval here (it is the item bootstrap's, :mod:`empathy.bootstrap`)."""
        rows = []
        for row in self.table.to_dict("records"):
            base = {"task": row["task"], "model": row["model"], "metric": row["metric"], "scorer": row["judge"]}
            rows.append({**base, "estimator": "judge", "value": row["judge_value"], "ci_low": math.nan,
                         "ci_high": math.nan, "n_audit": row["n_audit"]})
            rows.append({**base, "estimator": "human", "value": row["human_value"], "ci_low": row["human_low"],
                         "ci_high": row["human_high"], "n_audit": row["n_audit"]})
            rows.append({**base, "estimator": "ppi", "value": row["ppi_value"], "ci_low": row["ppi_low"],
                         "ci_high": row["ppi_high"], "n_audit": row["n_audit"]})
        return pd.DataFrame(rows, columns=["task", "model", "metric", "scorer", "estimator", "value", "ci_low",
                                           "ci_high", "n_audit"])


def _group_row(part: pd.DataFrame, confidence: float, binary: bool) -> tuple[dict[str, object], PPIMean | None]:
    """The counts and the three estimates of one group of frame outputs (one task level, model and metric)."""
    decided = part["decided"].to_numpy(bool)
    drawn = part["position"].notna().to_numpy()
    f_ok = part["f_ok"].to_numpy(bool)
    labelled = decided & f_ok & part["y_ok"].fillna(False).to_numpy(bool)
    unlabelled = ~decided & f_ok
    last = part.loc[decided, "position"].max() if decided.any() else -1
    row: dict[str, object] = {
        "n_frame": len(part), "n_drawn": int(drawn.sum()), "n_decided": int(decided.sum()),
        "n_audit": int(labelled.sum()), "n_unusable": int(decided.sum() - labelled.sum()),
        "n_pending": int((drawn & ~decided).sum()),
        "n_skipped": int((drawn & ~decided & (part["position"].fillna(-1).to_numpy() < last)).sum()),
        "n_undefined": int((~f_ok).sum()),
        "judge_value": float(part.loc[f_ok, "f"].mean()) if f_ok.any() else math.nan}
    result = None
    if labelled.sum() >= 2:
        result = ppi_mean(part["y"].to_numpy(float)[labelled], part["f"].to_numpy(float)[labelled],
                          part["f"].to_numpy(float)[unlabelled], confidence=confidence, binary=binary)
    return row, result


#: The warning of a row with too few audited outputs for any estimate.
TOO_FEW_WARNING = "fewer than 2 audited outputs: no estimate"


def _estimates(result: PPIMean | None) -> dict[str, object]:
    if result is None:
        return {**{c: math.nan for c in ("human_value", "human_low", "human_high", "ppi_value", "ppi_low",
                                         "ppi_high", "ppi_se", "lam", "n_effective", "ess_gain")},
                "warning": TOO_FEW_WARNING}
    effective = result.n_effective
    return {"human_value": result.human.value, "human_low": result.human.low, "human_high": result.human.high,
            "ppi_value": result.estimate.value, "ppi_low": result.estimate.low, "ppi_high": result.estimate.high,
            "ppi_se": result.estimate.se, "lam": result.lam,
            "n_effective": math.nan if effective is None else effective,
            "ess_gain": math.nan if effective is None else effective / result.n, "warning": result.warning}


def _stratified_row(strata: list[tuple[dict[str, object], PPIMean | None, int]], confidence: float
                    ) -> dict[str, object]:
    """A model's pooled row from its (model, task) strata: weights = the strata's usable judge terms; each interval
    ``value +- t se`` with Welch-Satterthwaite degrees of freedom over the strata (``n_h - 1`` each)."""
    counts = {k: sum(int(row[k]) for row, _, _ in strata) for k in
              ("n_frame", "n_drawn", "n_decided", "n_audit", "n_unusable", "n_pending", "n_skipped", "n_undefined")}
    usable = np.array([w for _, _, w in strata], dtype=float)
    judge = np.array([row["judge_value"] for row, _, _ in strata], dtype=float)
    weights = usable / usable.sum() if usable.sum() else usable
    combined: dict[str, object] = {**counts, "judge_value": float(np.nansum(weights * judge)) if usable.sum()
                                   else math.nan, **_estimates(None)}
    results = [r for _, r, _ in strata]
    if not usable.sum() or any(r is None for r, w in zip(results, usable, strict=True) if w > 0):
        combined["warning"] = "a stratum has fewer than 2 audited outputs: no pooled estimate"
        return combined
    kept = [(r, w) for r, w in zip(results, weights, strict=True) if w > 0]
    for name, pick in (("human", lambda r: r.human), ("ppi", lambda r: r.estimate)):
        value = float(sum(w * pick(r).value for r, w in kept))
        pieces = [(w * w * pick(r).se ** 2, r.n - 1.0) for r, w in kept]
        se = math.sqrt(sum(v for v, _ in pieces))
        df = satterthwaite_df(pieces)
        half = t_quantile(confidence, df) * se if se > 0 else 0.0
        combined[f"{name}_value"], combined[f"{name}_low"], combined[f"{name}_high"] = value, value - half, \
            value + half
        if name == "ppi":
            combined["ppi_se"] = se
    widths = (combined["human_high"] - combined["human_low"], combined["ppi_high"] - combined["ppi_low"])
    if min(widths) > 0:
        combined["n_effective"] = counts["n_audit"] * (widths[0] / widths[1]) ** 2
        combined["ess_gain"] = combined["n_effective"] / counts["n_audit"]
    reasons = sorted({r.warning for r, _ in kept if r.warning})
    combined["warning"] = ("pooled over strata with a t approximation whose 95 % is not promised: a stratum's "
                           f"interval says {reasons[0]}" if reasons else
                           zero_width_warning("the pooled PPI interval") if min(widths) <= 0 else None)
    return combined


def ppi_estimates(outputs: pd.DataFrame, ratings: pd.DataFrame, design: AuditDesign, decisions: pd.DataFrame, *,
                  metrics: Sequence[str] | None = None, sentences: pd.DataFrame | None = None,
                  egm_both_zero: str = "zero", confidence: float = DEFAULT_CONFIDENCE) -> PPIReport:
    """PPI++ estimates of every metric an audit corrects, per model and per task, beside judge-only and human-only.

    Parameters
    ----------
    outputs : DataFrame
        The outputs table (item_id, model, optional task) the design was drawn from.
    ratings : DataFrame
        Long ratings holding the audited judge's *own* ratings (never with overrides applied).
    design : AuditDesign
        The audit (:func:`empathy.audit.draw_audit`); its frame must still be the data's.
    decisions : DataFrame
        The human audit decisions: item_id, model, value (and dimension: rows of other dimensions are ignored),
        one per output. Only decisions on drawn outputs are used; pass audit decisions only (made in audit
        order), never those of the disagreement or influence queues.
    metrics : sequence of str, optional
        The metrics to estimate (default: every one reading the audited dimension, :func:`ppi_metrics`).
    sentences : DataFrame, optional
        Sentence counts (item_id, model, sentences_ref, sentences_gen) for EGM.
    egm_both_zero : str
        EGM's reading of ``a + b = 0`` (:class:`empathy.metrics.MetricOptions`).
    confidence : float
        Nominal coverage of the intervals.

    Returns
    -------
    PPIReport
        Rows for every model pooled over tasks (task ``"all"``) and, when the frame has several tasks or the
        design is stratified, per task. The module docstring defines every column.

    Raises
    ------
    TypeError, ValueError
        For a malformed table, a frame that changed since the draw (outputs or the judge's ratings added or
        removed), a metric that does not read the audited dimension, a decision out of the dimension's range or
        two decisions on one output.
    """
    _z(confidence)  # the check
    specs = ppi_metrics(metrics, design.dimension)
    frame = audit_frame(outputs, ratings, judge=design.judge, dimension=design.dimension)
    if frame_digest(frame) != design.frame_digest:
        raise ValueError(f"the outputs or {design.judge!r}'s ratings on {design.dimension!r} changed since audit "
                         f"{design.short_digest} was drawn (frame of {len(frame)} outputs, {design.n_frame} then): "
                         "draw a new audit")
    decided, n_ignored = _decisions(decisions, design)
    drawn_positions = {(o.item_id, o.model): o.position for o in design.outputs}
    frame["position"] = [drawn_positions.get(k) for k in zip(frame["item_id"].tolist(), frame["model"].tolist(),
                                                             strict=True)]
    frame["decided"] = frame.set_index(["item_id", "model"]).index.isin(
        pd.MultiIndex.from_frame(decided[["item_id", "model"]]))
    tasks = sorted(frame["task"].unique())
    per_task = design.stratify_by_task or len(tasks) > 1
    rows, components = [], []
    for spec in specs:
        terms = _terms(outputs, ratings, design, decided, spec, sentences, egm_both_zero)
        scored = frame.merge(terms, on=["item_id", "model"], how="left")
        scored["f_ok"] = scored["f_ok"].fillna(False).astype(bool)
        binary = all(m.DIMENSIONS[d].binary for d in spec.dimensions)  # a share (CA): exact intervals apply
        for model, part in scored.groupby("model", sort=True):
            strata = []
            levels = ([(ALL_TASKS, part)] if not design.stratify_by_task else [])
            if per_task:
                levels += [(task if task != NO_TASK else "(none)", p) for task, p in part.groupby("task", sort=True)]
            for task, group in levels:
                scheme = "domain" if task != ALL_TASKS and not design.stratify_by_task else "srs"
                counts, result = _group_row(group, confidence, binary)
                base = {"task": task, "model": model, "metric": spec.name, "judge": design.judge, "scheme": scheme}
                rows.append({**base, **counts, **_estimates(result)})
                if result is not None:
                    components.append({"task": task, "model": model, "metric": spec.name, "n": result.n,
                                       "n_unlabelled": result.n_unlabelled, "cov": result.cov, "var_y": result.var_y,
                                       "var_f_labelled": result.var_f_labelled,
                                       "var_f_unlabelled": result.var_f_unlabelled, "var_f_all": result.var_f_all})
                if design.stratify_by_task:
                    strata.append((counts, result, int(group["f_ok"].sum())))
            if design.stratify_by_task:
                rows.append({"task": ALL_TASKS, "model": model, "metric": spec.name, "judge": design.judge,
                             "scheme": "stratified", **_stratified_row(strata, confidence)})
    table = pd.DataFrame(rows, columns=list(PPI_COLUMNS))
    # the table's order: metrics as the registry, pooled rows first, then tasks and models by name
    order = table.assign(_metric=table["metric"].map({name: i for i, name in enumerate(m.METRICS)}),
                         _pooled=table["task"] != ALL_TASKS)
    table = order.sort_values(["_metric", "_pooled", "task", "model"], kind="stable").drop(columns=["_metric",
                                                                                                   "_pooled"])
    return PPIReport(table.reset_index(drop=True), pd.DataFrame(components, columns=list(COMPONENT_COLUMNS)),
                     design, float(confidence), int(n_ignored))


# ------------------------------------------------------------------------------------------ a results table

#: Columns of :func:`estimator_table`: every row of a results table with its interval, and the audit's rows.
ESTIMATOR_COLUMNS: tuple[str, ...] = (
    "task", "model", "scorer", "metric", "estimator", "value", "ci_low", "ci_high", "n", "n_missing", "n_undefined",
    "rank", "rank_low", "rank_high", "n_audit", "n_decided", "n_pending", "n_skipped", "n_unusable", "human",
    "human_low", "human_high", "lam", "n_effective", "ess_gain", "scheme", "audit", "warning")
#: ``estimator`` of a row: the judge's own values, a text-only metric's detectors, or PPI++ with an audit.
ESTIMATOR_JUDGE, ESTIMATOR_DETECTOR, ESTIMATOR_PPI = "judge", "detector", "ppi"


def _ppi_rows(report: PPIReport, by_task: bool) -> list[dict[str, object]]:
    """One results row per PPI estimate: the pooled rows, or with ``by_task`` the per-task rows."""
    table = report.table
    if not by_task:
        part = table[table["task"] == ALL_TASKS]
    else:
        part = table[table["task"] != ALL_TASKS]
        tasks = {o.task for o in report.design.outputs}
        if part.empty and len(tasks) == 1:  # a frame of one task has pooled rows only: they are that task's
            part = table[table["task"] == ALL_TASKS].assign(task=tasks.pop())
    return [{"task": row["task"], "model": row["model"], "scorer": row["judge"], "metric": row["metric"],
             "estimator": ESTIMATOR_PPI, "value": row["ppi_value"], "ci_low": row["ppi_low"],
             "ci_high": row["ppi_high"], "n": row["n_frame"], "n_audit": row["n_audit"],
             "n_decided": row["n_decided"], "n_pending": row["n_pending"], "n_skipped": row["n_skipped"],
             "n_unusable": row["n_unusable"], "human": row["human_value"], "human_low": row["human_low"],
             "human_high": row["human_high"], "lam": row["lam"], "n_effective": row["n_effective"],
             "ess_gain": row["ess_gain"], "scheme": row["scheme"], "audit": report.design.short_digest}
            for row in part.to_dict("records")]


def estimator_table(table: pd.DataFrame, intervals: pd.DataFrame | None = None,
                    reports: Sequence[PPIReport] = (), *, by_task: bool = True) -> pd.DataFrame:
    """A results table with each value's interval and rank interval, and beside each audited value its PPI row.

    Parameters
    ----------
    table : DataFrame
        The results table of :func:`empathy.evaluate.compute_metrics` (task, model, scorer, metric, value, n,
        n_missing, n_undefined), judges' values with whatever overrides the caller applied.
    intervals : DataFrame, optional
        :attr:`empathy.bootstrap.TableIntervals.values` of the same table (ci_low, ci_high, rank_low, rank_high
        per task, model, scorer, metric); without it the intervals are missing.
    reports : sequence of PPIReport
        :func:`ppi_estimates` of the audits to show (each computed from the judge's *own* ratings).
    by_task : bool
        Whether ``table`` is per task (the PPI rows are then the per-task ones) or pooled (task ``"all"``).

    Returns
    -------
    DataFrame
        :data:`ESTIMATOR_COLUMNS`: the table's rows in order, with ``estimator`` ``judge`` (a judge metric) or
        ``detector`` (a text-only metric, LD), ``rank`` (:func:`empathy.evaluate.rank_by_direction`) and the
        bootstrap intervals (and their ``warning``: too few items, zero width); after each judge row, the PPI
        rows of the same (task, model, judge, metric), one per audit (``estimator`` ``ppi``, ``ci_low``/``ci_high``
        the PPI interval, ``human`` the human-only value with its interval, ``n_audit``, ``n_effective``,
        ``ess_gain``, ``audit`` the design's short digest).
    """
    from empathy.evaluate import rank_by_direction

    rows = table.copy()
    rows["estimator"] = [ESTIMATOR_JUDGE if m.get_metric(name).judged else ESTIMATOR_DETECTOR
                         for name in rows["metric"]]
    rows["rank"] = rank_by_direction(rows) if len(rows) else pd.Series(dtype="Int64")
    keys = ["task", "model", "scorer", "metric"]
    if intervals is not None and len(intervals):
        shown = [c for c in ("ci_low", "ci_high", "rank_low", "rank_high", "warning") if c in intervals.columns]
        rows = left_join(rows, intervals[[*keys, *shown]], keys)
    extra = [row for report in reports for row in _ppi_rows(report, by_task)]
    if extra:
        beside: dict[tuple[object, ...], list[dict[str, object]]] = {}
        for row in extra:
            beside.setdefault(tuple(row[k] for k in keys), []).append(row)
        ordered: list[dict[str, object]] = []
        for row in rows.to_dict("records"):
            ordered.append(row)
            ordered.extend(beside.pop(tuple(row[k] for k in keys), []))
        ordered.extend(row for left in beside.values() for row in left)
        result = pd.DataFrame(ordered, columns=list(ESTIMATOR_COLUMNS))
    else:  # no audit: the rows as they are (a round trip through records costs more than the rest together)
        result = rows.reset_index(drop=True).reindex(columns=list(ESTIMATOR_COLUMNS))
    for column in ("n", "n_missing", "n_undefined", "rank", "rank_low", "rank_high", "n_audit", "n_decided",
                   "n_pending", "n_skipped", "n_unusable"):
        if not isinstance(result[column].dtype, pd.Int64Dtype):
            result[column] = pd.to_numeric(result[column], errors="coerce").astype("Int64")
    return result


def estimator_signature_fields(reports: Sequence[PPIReport]) -> dict[str, str]:
    """The signature's fields for a table with these audits' PPI rows: ``estimator`` (``judge`` alone, or
    ``judge+ppi++``) and each :meth:`PPIReport.signature_fields` value, those of several audits joined with ``+``
    in the audits' order (the confidence level once when they share it)."""
    if not reports:
        return {"estimator": ESTIMATOR_JUDGE}
    fields: dict[str, list[str]] = {}
    for report in reports:
        for key, value in report.signature_fields().items():
            if key != "estimator" and not (key == "confidence" and value in fields.get(key, [])):
                fields.setdefault(key, []).append(value)
    return {"estimator": f"{ESTIMATOR_JUDGE}+{ESTIMATOR}", **{k: "+".join(v) for k, v in fields.items()}}
