"""Import the expert, crowd and LLM annotations of Kumar et al. (2025) into the empathy data model.

The data set ("When Large Language Models are Reliable for Judging Empathic Communication", arXiv 2506.10150)
holds 200 support conversations, 50 from each of four corpora, each rated on its own framework's dimensions by
three experts (``expert1..3``), a crowd aggregate (``crowd``) and three LLM judges (``gpt`` = GPT-4o,
``claude`` = Claude 3.7 Sonnet, ``gemini`` = Gemini 2.5 Pro).

Mapping to the data model (see :mod:`empathy.io`):

* one *outputs* row per conversation; ``model`` and ``task`` are the corpus name (``epitome``,
  ``lend_an_ear``, ``empatheticdialogues``, ``perceived_empathy``) because the supporter who wrote the reply
  is the corpus' human supporter, not an LLM; ``item_id`` is ``<corpus>:<source id>``;
* ``reference`` is the seeker's text and ``generation`` the supporter's text (all supporter turns of a
  multi-turn conversation, one turn a line); Perceived Empathy conversations are not public, so its rows
  have empty ``reference`` and ``generation`` (``text_available`` = ``no``);
* one long *ratings* row per (conversation, rater, dimension), on the corpus' own dimension names and scales
  (:data:`CORPORA`); ``rater_kind`` is ``expert``, ``crowd`` or ``llm``.

Every quirk of the files is handled explicitly and counted in :class:`ImportReport` (see docs/kumar2025.md).
The conversations are third-party text: this module reads them from the data folder and never ships them.
"""

from __future__ import annotations

import csv
import math
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np
import pandas as pd

from empathy.datasets.report import FileStats, ImportReport, ImportResult
from empathy.io import DataError, build_dataset, validate_outputs, validate_ratings

RunPolicy = Literal["mean", "first"]


@dataclass(frozen=True)
class CorpusSpec:
    """One corpus of the data set: its folder, key column(s), dimensions and rating scale."""

    name: str
    title: str
    key_columns: tuple[str, ...]
    dimensions: tuple[str, ...]
    scale: tuple[int, int]


#: The four corpora, in the order of the paper's tables. ``key_columns`` lists the accepted names of the
#: conversation key, first match wins (the authors' raw Perceived Empathy file calls it OriginalDiscloserID).
CORPORA: dict[str, CorpusSpec] = {
    "epitome": CorpusSpec(
        "epitome", "EPITOME", ("sp_id",),
        ("level_emotional_reactions", "level_interpretations", "level_explorations"), (0, 2)),
    "lend_an_ear": CorpusSpec(
        "lend_an_ear", "Lend an Ear", ("conversation_id",),
        ("validating_emotions", "encouraging_elaboration", "demonstrating_understanding", "advice_giving",
         "self_oriented", "dismissing_emotions"), (1, 5)),
    "empatheticdialogues": CorpusSpec(
        "empatheticdialogues", "EmpatheticDialogues", ("conv_id",), ("empathy", "relevance", "fluency"), (1, 5)),
    "perceived_empathy": CorpusSpec(
        "perceived_empathy", "Perceived Empathy", ("id", "OriginalDiscloserID"),
        ("m_understood", "m_validated", "m_affirmed", "m_seen", "m_accepted", "m_caredfor", "m_emotional",
         "m_practical", "m_motivation"), (1, 7)),
}

#: rater -> (rater_kind, what produced the ratings); the file is ``annotations/<corpus>/<rater>_ratings.csv``.
RATERS: dict[str, tuple[str, str]] = {
    "expert1": ("expert", "expert1"),
    "expert2": ("expert", "expert2"),
    "expert3": ("expert", "expert3"),
    "crowd": ("crowd", "crowd-mean"),
    "gpt": ("llm", "gpt-4o"),
    "claude": ("llm", "claude-3.7-sonnet"),
    "gemini": ("llm", "gemini-2.5-pro"),
}

#: Where the conversations live, per corpus (Perceived Empathy has none: its conversations are not public).
TEXT_FILES: dict[str, str] = {
    "epitome": "original_data/sample_epitome.csv",
    "lend_an_ear": "original_data/sample_lend_an_ear_conversations.csv",
    "empatheticdialogues": "original_data/sample_empatheticdialogues.csv",
}
#: Files read only to cross-check the crowd means (optional: the check is skipped when absent).
CROWD_RAW_FILES: dict[str, str] = {
    "lend_an_ear": "original_data/sample_lend_an_ear_annotations.csv",
    "empatheticdialogues": "original_data/sample_empatheticdialogues.csv",
    "perceived_empathy": "original_data/sample_perceived_empathy_annotations.csv",
    "epitome": "original_data/sample_epitome.csv",
}
#: The support seekers' own ratings of the responses they received (Perceived Empathy only; optional).
SELF_RATINGS_FILE = "original_data/perceived_empathy_self_ratings.csv"
#: seeker's self-report item -> the third-party dimension that asks about the same feeling
SEEKER_DIMENSIONS: dict[str, str] = {
    "understood": "m_understood", "validated": "m_validated", "affirmed": "m_affirmed", "seen": "m_seen",
    "accepted": "m_accepted", "caredfor": "m_caredfor",
}
SEEKER_RATER = ("seeker", "human", "seeker-self-report")
#: Columns that are expected in the rating files and deliberately not imported as ratings.
KNOWN_EXTRA_COLUMNS: dict[str, str] = {
    "rp_id": "EPITOME response id, checked against the conversation file and kept as outputs metadata",
    "full_conversation": "transcript the LLM judge saw, checked against the conversation file, not imported",
    "response_length": "authors' word count of the supporter text, checked, kept as outputs metadata",
}
SIGNATURE_PREFIX = "kumar2025"
_INDEX_COLUMN = re.compile(r"^(Unnamed: \d+|index)?$")
_TURN = re.compile(r"^\s*(Seeker|Supporter):\s?(.*)$")


# ---------------------------------------------------------------------------------------------- reading


def _read_csv(path: Path, root: Path) -> pd.DataFrame:
    """Read a CSV as strings (the Lend an Ear ids have 20 digits and overflow int64, so nothing is parsed)."""
    label = _rel(path, root)
    if not path.is_file():
        raise DataError(label, "expected file not found")
    try:
        frame = pd.read_csv(path, dtype=str, keep_default_na=False, encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise DataError(label, f"not UTF-8 text (byte {exc.start})") from None
    except (pd.errors.ParserError, pd.errors.EmptyDataError, OSError, ValueError) as exc:
        raise DataError(label, f"cannot read CSV: {str(exc).strip() or type(exc).__name__}") from None
    frame.columns = [str(c).strip() for c in frame.columns]
    return frame


def _sniff(path: Path) -> tuple[list[str], str]:
    """The header cells as written (pandas renames an empty header to 'Unnamed: 0') and the line endings."""
    data = path.read_bytes()
    first = data.split(b"\n", 1)[0]
    endings = "CRLF" if first.endswith(b"\r") else "LF"
    if data and not data.endswith(b"\n"):
        endings += ", no final newline"
    cells = next(csv.reader([first.rstrip(b"\r").decode("utf-8", errors="replace")]), [])
    return [c.strip() for c in cells], endings


def _rel(path: Path, root: Path) -> str:
    try:
        return str(path.relative_to(root))
    except ValueError:
        return str(path)


def _parse_float(text: str) -> float:
    text = text.strip()
    if text == "" or text.lower() in ("nan", "na", "null", "none"):
        return math.nan
    return float(text)


def _find_key(frame: pd.DataFrame, spec: CorpusSpec, label: str) -> str:
    for name in spec.key_columns:
        if name in frame.columns:
            return name
    raise DataError(label, f"no key column (expected one of {', '.join(spec.key_columns)}; "
                    f"have {', '.join(frame.columns)})")


def _split_turns(transcript: str) -> list[tuple[str, str]]:
    """Split a ``Seeker: ...`` / ``Supporter: ...`` transcript into (speaker, text) turns.

    A line without a speaker prefix continues the previous turn (Lend an Ear turns span several lines).
    """
    turns: list[list[str]] = []
    for line in transcript.split("\n"):
        match = _TURN.match(line)
        if match:
            turns.append([match.group(1), match.group(2)])
        elif turns:
            turns[-1][1] += "\n" + line
        elif line.strip():
            turns.append(["", line])
    return [(speaker, text.strip()) for speaker, text in turns]


def _decode_ed(text: str) -> str:
    """EmpatheticDialogues escapes commas as ``_comma_``; its own loaders decode them, and so do we."""
    return text.replace("_comma_", ",")


# ------------------------------------------------------------------------------------------- the texts


def _load_texts(root: Path, report: ImportReport) -> dict[str, pd.DataFrame]:
    """One frame per corpus indexed by source id: reference, generation, conversation and metadata."""
    texts: dict[str, pd.DataFrame] = {}

    label = TEXT_FILES["epitome"]
    frame = _read_csv(root / label, root)
    _require(frame, ("sp_id", "rp_id", "seeker_post", "response_post", "response_length"), label)
    texts["epitome"] = pd.DataFrame({
        "reference": frame["seeker_post"].str.strip().to_numpy(),
        "generation": frame["response_post"].str.strip().to_numpy(),
        "conversation": ("Seeker: " + frame["seeker_post"] + "\nSupporter: " + frame["response_post"]).to_numpy(),
        "rp_id": frame["rp_id"].to_numpy(),
        "turns": 2,
        "response_length": frame["response_length"].to_numpy(),
    }, index=pd.Index(frame["sp_id"].str.strip(), name="source_id"))
    _check_unique(texts["epitome"], label, report)
    report.add(label, "ignored", len(frame), "EPITOME's own level_* labels and rationales are not imported "
               "from this file: they are the 'crowd' rater (crowd_ratings.csv), cross-checked below")

    label = TEXT_FILES["lend_an_ear"]
    frame = _read_csv(root / label, root)
    _require(frame, ("conversation_id", "full_conversation", "response_length"), label)
    texts["lend_an_ear"] = _from_transcripts(frame["conversation_id"], frame["full_conversation"],
                                             frame["response_length"], label, report)

    label = TEXT_FILES["empatheticdialogues"]
    frame = _read_csv(root / label, root)
    _require(frame, ("conv_id", "utterance_idx", "context", "full_conversation", "response_length"), label)
    per_conv = frame.groupby("conv_id", sort=False)
    # Only the utterance columns may vary within a conversation; a varying rating or transcript would mean
    # that keeping the first row loses information.
    per_utterance = {"utterance_idx", "speaker_idx", "utterance", "tags"}
    for column in [c for c in frame.columns if c not in per_utterance and c != "conv_id"]:
        varying = int((per_conv[column].nunique() > 1).sum())
        if varying:
            raise DataError(label, f"{varying} conversations have more than one value", column=column)
    first = per_conv.first()
    report.add(label, "merged", len(frame) - len(first),
               f"one row per utterance ({len(frame)} rows, {len(first)} conversations); all conversation-level "
               "columns were checked identical across a conversation's rows, so the first row is kept")
    escaped = int(first["full_conversation"].str.count("_comma_").sum())
    transcripts = first["full_conversation"].map(_decode_ed)
    table = _from_transcripts(pd.Series(first.index), transcripts, first["response_length"], label, report)
    table["emotion"] = first["context"].reindex(table.index).to_numpy()
    texts["empatheticdialogues"] = table
    report.add(label, "changed", escaped, "'_comma_' escapes (EmpatheticDialogues' CSV escaping) decoded "
               "to ',' in reference, generation and conversation")
    return texts


def _require(frame: pd.DataFrame, columns: Iterable[str], label: str) -> None:
    for column in columns:
        if column not in frame.columns:
            raise DataError(label, f"missing column (have: {', '.join(frame.columns)})", column=column)


def _check_unique(table: pd.DataFrame, label: str, report: ImportReport) -> None:
    duplicated = table.index.duplicated()
    if duplicated.any():
        raise DataError(label, f"conversation id {table.index[duplicated][0]!r} occurs twice")


def _from_transcripts(ids: pd.Series, transcripts: pd.Series, lengths: pd.Series, label: str,
                      report: ImportReport) -> pd.DataFrame:
    rows = []
    unprefixed = 0
    for source_id, transcript, length in zip(ids, transcripts, lengths, strict=True):
        turns = _split_turns(transcript)
        unprefixed += sum(1 for speaker, _ in turns if not speaker)
        seeker = [text for speaker, text in turns if speaker == "Seeker" and text]
        supporter = [text for speaker, text in turns if speaker == "Supporter" and text]
        rows.append({"source_id": str(source_id).strip(), "reference": "\n".join(seeker),
                     "generation": "\n".join(supporter), "conversation": transcript.strip(),
                     "turns": len(turns), "response_length": length})
    table = pd.DataFrame(rows).set_index("source_id")
    _check_unique(table, label, report)
    if unprefixed:
        report.add(label, "ignored", unprefixed, "text before the first 'Seeker:'/'Supporter:' prefix")
    words = table["generation"].str.split().str.len()
    matches = int((words == pd.to_numeric(table["response_length"], errors="coerce")).sum())
    report.check(label, matches == len(table), matches,
                 f"of {len(table)} conversations: word count of the supporter turns (our generation) equals "
                 "the authors' response_length")
    return table


# ----------------------------------------------------------------------------------------- the ratings


def _read_ratings_file(root: Path, spec: CorpusSpec, rater: str, runs: RunPolicy, report: ImportReport,
                       texts: pd.DataFrame | None) -> pd.DataFrame:
    """Read one ``<rater>_ratings.csv`` into long rows (source_id, dimension, value, reason)."""
    label = f"annotations/{spec.name}/{rater}_ratings.csv"
    frame = _read_csv(root / label, root)
    if frame.empty:  # a header alone would fail later inside pandas arithmetic, far from its cause
        raise DataError(label, "no rating rows (the file has only a header)")
    stats = FileStats(path=label, rater=rater, corpus=spec.name, rows_read=len(frame))
    report.files.append(stats)
    raw_header, stats.line_endings = _sniff(root / label)

    index_columns = [c for c in frame.columns if _INDEX_COLUMN.match(c)]
    for column in index_columns:
        header = raw_header[list(frame.columns).index(column)] if len(raw_header) == len(frame.columns) else column
        named = f"{column!r} (empty header)" if header.strip() == "" else f"{header!r}"
        values = pd.to_numeric(frame[column], errors="coerce")
        contiguous = values.notna().all() and (values.to_numpy() == np.arange(len(frame))).all()
        shape = "0..n-1" if contiguous else (f"non-contiguous {int(values.min())}..{int(values.max())}: rows "
                                              "selected from a larger frame" if values.notna().all() else "text")
        report.add(label, "dropped", 1, f"pandas index column {named}, values {shape}")
        stats.index_columns_dropped.append(named)
    frame = frame.drop(columns=index_columns)

    key = _find_key(frame, spec, label)
    stats.key_column = key
    for dimension in spec.dimensions:
        if dimension not in frame.columns:
            raise DataError(label, f"missing dimension column (have: {', '.join(frame.columns)})",
                            column=dimension)
        for position, cell in enumerate(frame[dimension]):
            if not _is_number(cell):
                # row numbers count the header as row 1, as in a spreadsheet (and empathy.io)
                raise DataError(label, f"not a number: {cell[:40]!r}", row=position + 2, column=dimension)
    extra = [c for c in frame.columns if c != key and c not in spec.dimensions]
    stats.extra_columns = extra
    for column in extra:
        why = KNOWN_EXTRA_COLUMNS.get(column, "unexpected column, not imported")
        report.add(label, "ignored", 1, f"column {column!r}: {why}")
    if texts is not None:
        _check_extra_columns(frame, key, extra, texts, label, report)

    frame[key] = frame[key].str.strip()
    blank = frame[key] == ""
    stats.blank_keys_dropped = int(blank.sum())
    if blank.any():
        report.add(label, "dropped", int(blank.sum()), f"rows with an empty {key!r}")
    frame = frame.loc[~blank, [key, *spec.dimensions]]

    # Identical rows of an LLM judge are agreeing runs (kept for the run count); of a person, a copy error.
    exact = frame.duplicated() if RATERS[rater][0] != "llm" else pd.Series(False, index=frame.index)
    stats.exact_duplicates_dropped = int(exact.sum())
    if exact.any():
        report.add(label, "dropped", int(exact.sum()), "exact duplicate rows (same key, same values)")
    frame = frame.loc[~exact]

    long = frame.melt(id_vars=key, value_vars=list(spec.dimensions), var_name="dimension", value_name="raw")
    long = long.rename(columns={key: "source_id"})
    long["value"] = long["raw"].map(_parse_float)
    low, high = spec.scale
    out_of_scale = long["value"].notna() & ((long["value"] < low) | (long["value"] > high))
    stats.out_of_scale = int(out_of_scale.sum())
    long["reason"] = ""
    long.loc[long["value"].isna(), "reason"] = f"empty cell in {label}"
    if out_of_scale.any():
        report.add(label, "changed", int(out_of_scale.sum()), f"values outside the {low}-{high} scale set missing")
        long.loc[out_of_scale, "reason"] = "out of scale in source: " + long.loc[out_of_scale, "raw"]
        long.loc[out_of_scale, "value"] = math.nan
    stats.missing_values = int((long["raw"].str.strip() == "").sum())

    rows_merged = len(frame) - frame[key].nunique()
    if rows_merged:
        long = _merge_runs(long, rater, runs, label, rows_merged, stats, report)
    stats.fractional_values = int((long["value"].notna() & (long["value"] % 1 != 0)).sum())
    stats.items = int(long["source_id"].nunique())
    stats.ratings = len(long)
    return long[["source_id", "dimension", "value", "reason"]]


def _is_number(text: str) -> bool:
    try:
        _parse_float(text)
    except ValueError:
        return False
    return True


def _merge_runs(long: pd.DataFrame, rater: str, runs: RunPolicy, label: str, rows_merged: int,
                stats: FileStats, report: ImportReport) -> pd.DataFrame:
    """Collapse several rows of one conversation into one rating per dimension.

    LLM judges were sometimes run more than once on a conversation; people are not, so a human file with
    conflicting rows for one conversation is an error rather than something to average away.
    """
    kind = RATERS[rater][0]
    groups = long.groupby(["source_id", "dimension"], sort=False)
    sizes = groups["value"].size()
    repeated_keys = sizes[sizes > 1].index.get_level_values("source_id").unique()
    if kind != "llm":
        raise DataError(label, f"conversation {repeated_keys[0]!r} has conflicting rows; a {kind} rates a "
                        "conversation once")
    stats.repeated_run_rows_merged = rows_merged
    merged = []
    for (source_id, dimension), part in groups:
        values = part["value"].dropna()
        count = len(part)
        if count == 1:
            merged.append(part.iloc[0].to_dict())
            continue
        if runs == "first":
            value = float(part["value"].iloc[0])
            reason = f"first of {count} runs (runs: {_fmt_values(part['value'])})"
        else:
            value = float(values.mean()) if len(values) else math.nan
            reason = f"mean of {len(values)} of {count} runs (runs: {_fmt_values(part['value'])})"
        merged.append({"source_id": source_id, "dimension": dimension, "raw": "", "value": value,
                       "reason": reason})
    report.add(label, "merged", rows_merged,
               f"repeated-run rows of {len(repeated_keys)} conversations collapsed by the '{runs}' policy "
               "(the run count and the runs are in each rating's reason)")
    return pd.DataFrame(merged)


def _fmt_values(values: pd.Series) -> str:
    return ", ".join("NA" if math.isnan(v) else f"{v:g}" for v in values)


def _check_extra_columns(frame: pd.DataFrame, key: str, extra: list[str], texts: pd.DataFrame, label: str,
                         report: ImportReport) -> None:
    ids = frame[key].str.strip()
    known = ids.isin(texts.index)
    if "rp_id" in extra and "rp_id" in texts.columns:
        same = int((frame.loc[known, "rp_id"].str.strip().to_numpy()
                    == texts.loc[ids[known], "rp_id"].to_numpy()).sum())
        report.check(label, same == len(frame), same, f"of {len(frame)} rp_id values equal the conversation file's")
    if "full_conversation" in extra:
        theirs = frame.loc[known, "full_conversation"].map(_normalise_transcript).to_numpy()
        ours = texts.loc[ids[known], "conversation"].map(_normalise_transcript).to_numpy()
        same = int((theirs == ours).sum())
        empty_turns = int(sum(
            sum(1 for _, text in _split_turns(t) if not text) for t in frame["full_conversation"]))
        note = (f"; the judge's transcripts hold {empty_turns} empty 'Seeker:'/'Supporter:' turns that the "
                "conversation file does not (ignored in this comparison)") if empty_turns else ""
        report.check(label, same == len(frame), same,
                     f"of {len(frame)} judge transcripts (full_conversation) equal the conversation file's{note}")


def _normalise_transcript(transcript: str) -> tuple[tuple[str, str], ...]:
    turns = _split_turns(_decode_ed(transcript))
    return tuple((speaker, " ".join(text.split())) for speaker, text in turns if text)


# --------------------------------------------------------------------------------------- cross-checks


def _check_crowd(root: Path, spec: CorpusSpec, crowd: pd.DataFrame, report: ImportReport) -> pd.Series | None:
    """Recompute the crowd means from the raw crowd files; return the number of crowd ratings per item."""
    label = f"annotations/{spec.name}/sample_ratings_crowdsourced.csv"
    if (root / label).is_file():
        twin = _read_csv(root / label, root)
        key = _find_key(twin, spec, label)
        long = twin.melt(id_vars=key, value_vars=[d for d in spec.dimensions if d in twin.columns],
                         var_name="dimension", value_name="raw")
        long["value"] = long["raw"].map(_parse_float)
        same = _compare(crowd, long.rename(columns={key: "source_id"}))
        report.check(label, same == len(crowd), same,
                     f"of {len(crowd)} values equal crowd_ratings.csv (a copy plus response_length; not imported "
                     "twice)")
    raw_label = CROWD_RAW_FILES.get(spec.name)
    if raw_label is None or not (root / raw_label).is_file():
        return None
    raw = _read_csv(root / raw_label, root)
    if spec.name == "lend_an_ear":
        values = raw[["conversation_id", *spec.dimensions]].copy()
        for d in spec.dimensions:
            values[d] = values[d].map(_parse_float)
        means = values.groupby("conversation_id")[list(spec.dimensions)].mean()
        same = _compare(crowd, _wide_to_long(means))
        empty = int(values[list(spec.dimensions)].isna().sum().sum())
        report.check(raw_label, same == len(crowd), same,
                     f"of {len(crowd)} crowd values equal the mean of the {len(raw)} raw crowd annotations "
                     f"(2-11 per conversation; {empty} empty cells skipped by the mean)")
        return values.groupby("conversation_id").size()
    if spec.name == "empatheticdialogues":
        first = raw.groupby("conv_id").first()
        means = pd.DataFrame({d: (first[f"{d}1"].map(_parse_float) + first[f"{d}2"].map(_parse_float)) / 2
                              for d in spec.dimensions})
        same = _compare(crowd, _wide_to_long(means))
        report.check(raw_label, same == len(crowd), same,
                     f"of {len(crowd)} crowd values equal the mean of the two conversation partners' ratings "
                     "(empathy1/empathy2 etc.)")
        return pd.Series(2, index=first.index)
    if spec.name == "perceived_empathy":
        key = _find_key(raw, spec, raw_label)
        long = raw.melt(id_vars=key, value_vars=list(spec.dimensions), var_name="dimension", value_name="raw")
        long["value"] = long["raw"].map(_parse_float)
        same = _compare(crowd, long.rename(columns={key: "source_id"}))
        report.check(raw_label, same == len(crowd), same,
                     f"of {len(crowd)} crowd values equal the authors' raw crowd means (key "
                     f"{key!r}; crowd size per conversation not published)")
        return None
    if spec.name == "epitome":
        long = raw.melt(id_vars="sp_id", value_vars=list(spec.dimensions), var_name="dimension", value_name="raw")
        long["value"] = long["raw"].map(_parse_float)
        same = _compare(crowd, long.rename(columns={"sp_id": "source_id"}))
        report.check(raw_label, same == len(crowd), same,
                     f"of {len(crowd)} crowd values equal EPITOME's own level_* labels (integers, one label "
                     "per conversation)")
    return None


def _wide_to_long(frame: pd.DataFrame) -> pd.DataFrame:
    long = frame.rename_axis("source_id").reset_index().melt(id_vars="source_id", var_name="dimension",
                                                             value_name="value")
    long["source_id"] = long["source_id"].astype(str).str.strip()
    return long


def _compare(ours: pd.DataFrame, theirs: pd.DataFrame) -> int:
    """How many of our (source_id, dimension) values equal theirs (to 1e-6, as the files round differently)."""
    joined = ours.merge(theirs[["source_id", "dimension", "value"]], on=["source_id", "dimension"],
                        how="left", suffixes=("", "_theirs"))
    close = np.isclose(joined["value"], joined["value_theirs"], atol=1e-6, equal_nan=True)
    return int(close.sum())


def _perceived_empathy_extras(root: Path, ids: pd.Index, include_seeker: bool, report: ImportReport
                              ) -> tuple[pd.DataFrame, pd.DataFrame | None]:
    """Metadata for the Perceived Empathy rows, and the seekers' own ratings when ``include_seeker``.

    The conversations are not public, but two files describe them: the raw crowd file gives the response's
    word count, and the self-ratings file says which label the seeker was shown (the response was written
    by a person in all 50, but about half the seekers were told it came from an AI) and how they felt.
    """
    meta = pd.DataFrame(index=ids)
    raw_label = CROWD_RAW_FILES["perceived_empathy"]
    if (root / raw_label).is_file():
        raw = _read_csv(root / raw_label, root)
        key = _find_key(raw, CORPORA["perceived_empathy"], raw_label)
        if "response_length" in raw.columns:
            meta["response_length"] = raw.set_index(raw[key].str.strip())["response_length"].reindex(ids)
    path = root / SELF_RATINGS_FILE
    if not path.is_file():
        if include_seeker:
            raise DataError(SELF_RATINGS_FILE, "expected file not found (needed for the seeker ratings)")
        return meta, None
    frame = _read_csv(path, root)
    _require(frame, ("id", "responseR", "labelR", *SEEKER_DIMENSIONS), SELF_RATINGS_FILE)
    frame["id"] = frame["id"].str.strip()
    if frame["id"].duplicated().any():
        raise DataError(SELF_RATINGS_FILE, f"participant {frame['id'][frame['id'].duplicated()].iat[0]!r} "
                        "occurs twice")
    sample = frame[frame["id"].isin(ids)].set_index("id")
    meta["response_source"] = sample["responseR"].str.replace(" response", "", regex=False).reindex(ids)
    meta["label_shown"] = sample["labelR"].str.replace(" label", "", regex=False).reindex(ids)
    if not include_seeker:
        return meta, None
    others = len(frame) - len(sample)
    report.add(SELF_RATINGS_FILE, "dropped", others,
               f"participants outside the 50-conversation sample (of {len(frame)} rows)")
    report.add(SELF_RATINGS_FILE, "ignored", len(frame.columns) - 1 - len(SEEKER_DIMENSIONS),
               "columns other than the six self-report items that match a rated dimension "
               f"({', '.join(f'{k}->{v}' for k, v in SEEKER_DIMENSIONS.items())})")
    stats = FileStats(path=SELF_RATINGS_FILE, rater=SEEKER_RATER[0], corpus="perceived_empathy",
                      rows_read=len(frame), key_column="id", line_endings=_sniff(path)[1])
    report.files.append(stats)
    long = sample.reset_index().melt(id_vars="id", value_vars=list(SEEKER_DIMENSIONS), var_name="item",
                                     value_name="raw")
    for position, cell in enumerate(long["raw"]):
        if not _is_number(cell):
            raise DataError(SELF_RATINGS_FILE, f"not a number: {cell[:40]!r}", column=long["item"].iat[position])
    long["value"] = long["raw"].map(_parse_float)
    low, high = CORPORA["perceived_empathy"].scale
    out_of_scale = long["value"].notna() & ~long["value"].between(low, high)
    long["reason"] = np.where(long["value"].isna(), f"empty cell in {SELF_RATINGS_FILE}", "")
    long.loc[out_of_scale, "reason"] = "out of scale in source: " + long.loc[out_of_scale, "raw"]
    long.loc[out_of_scale, "value"] = math.nan
    stats.out_of_scale = int(out_of_scale.sum())
    stats.missing_values = int((long["raw"].str.strip() == "").sum())
    stats.items, stats.ratings = int(long["id"].nunique()), len(long)
    long = long.rename(columns={"id": "source_id"})
    long["dimension"] = long["item"].map(SEEKER_DIMENSIONS)
    return meta, long[["source_id", "dimension", "value", "reason"]]


# --------------------------------------------------------------------------------------------- import


def check_directory(directory: str | Path) -> Path:
    """Return the data set root, raising :class:`DataError` naming the first expected file that is missing."""
    root = Path(directory)
    if not root.is_dir():
        raise DataError(str(root), "data set directory not found")
    expected = [root / f"annotations/{c}/{r}_ratings.csv" for c in CORPORA for r in RATERS]
    expected += [root / p for p in TEXT_FILES.values()]
    for path in expected:
        if not path.is_file():
            raise DataError(str(path), "expected file not found (is this the kumar2025 data set folder?)")
    return root


def import_steps() -> int:
    """How many times :func:`import_kumar2025` calls its ``progress`` hook: the texts, then one per
    (corpus, rater) ratings file."""
    return 1 + len(CORPORA) * len(RATERS)


def import_kumar2025(directory: str | Path, *, runs: RunPolicy = "mean", include_seeker: bool = False,
                     progress: Callable[[int], None] | None = None) -> ImportResult:
    """Import the Kumar et al. (2025) annotations from ``directory`` (the folder holding ``annotations/``).

    Parameters
    ----------
    directory
        The data set root, e.g. ``shared/datasets/kumar2025-empathic-communication``.
    runs
        What to do when an LLM file rates a conversation more than once: ``"mean"`` (default) keeps the
        mean of the runs, ``"first"`` the first run; either way the run count and the runs' values are
        kept in the rating's ``reason``.
    include_seeker
        Also import the support seekers' own ratings of the Perceived Empathy responses
        (``original_data/perceived_empathy_self_ratings.csv``) as rater ``seeker`` (rater_kind ``human``) on
        the six dimensions they share with the third-party raters (:data:`SEEKER_DIMENSIONS`).
    progress
        Called with ``1`` after the texts are read and after each (corpus, rater) ratings file: in all
        :func:`import_steps` calls (feed :meth:`empathy.progress.Tracker.advance`).

    Returns
    -------
    ImportResult
        Validated outputs and long ratings and the :class:`ImportReport`.

    Raises
    ------
    DataError
        A missing directory or file, a missing key or dimension column, or a non-numeric rating; the
        one-line message names the file.
    """
    if runs not in ("mean", "first"):
        raise ValueError(f"runs must be 'mean' or 'first', got {runs!r}")
    root = check_directory(directory)
    report = ImportReport(directory=str(root), run_policy=runs, include_seeker=include_seeker,
                          title="Kumar et al. (2025)")
    texts = _load_texts(root, report)
    if progress is not None:
        progress(1)

    output_parts = []
    rating_parts = []
    for spec in CORPORA.values():
        corpus_texts = texts.get(spec.name)
        per_rater = {}
        for rater in RATERS:
            per_rater[rater] = _read_ratings_file(root, spec, rater, runs, report, corpus_texts)
            if progress is not None:
                progress(1)
        crowd_n = _check_crowd(root, spec, per_rater["crowd"], report)

        rated_ids = pd.Index(sorted(set().union(*(set(p["source_id"]) for p in per_rater.values()))))
        if corpus_texts is not None:
            unrated = corpus_texts.index.difference(rated_ids)
            if len(unrated):
                report.add(TEXT_FILES[spec.name], "dropped", len(unrated), "conversations no rater rated")
            no_text = rated_ids.difference(corpus_texts.index)
            if len(no_text):
                report.add(f"annotations/{spec.name}", "changed", len(no_text),
                           "rated conversations missing from the conversation file get empty texts")
            table = corpus_texts.reindex(rated_ids)
        else:
            table = pd.DataFrame(index=rated_ids)
            report.add(f"annotations/{spec.name}", "changed", len(rated_ids),
                       "conversations are not public: outputs rows with empty reference and generation")
        extras = pd.DataFrame(index=rated_ids)
        if spec.name == "perceived_empathy":
            extras, seeker = _perceived_empathy_extras(root, rated_ids, include_seeker, report)
            if seeker is not None:
                per_rater[SEEKER_RATER[0]] = seeker
            if "response_length" in extras.columns:
                table["response_length"] = extras["response_length"]
        for rater, part in per_rater.items():
            missing_items = len(rated_ids) - part["source_id"].nunique()
            if missing_items:
                report.add(f"annotations/{spec.name}/{rater}_ratings.csv", "missing", missing_items,
                           "conversations this rater did not rate (no rows written)")

        outputs = pd.DataFrame({
            "item_id": [f"{spec.name}:{i}" for i in rated_ids],
            "model": spec.name,
            "task": spec.name,
            "reference": table.get("reference", pd.Series("", index=rated_ids)).fillna("").to_numpy(),
            "generation": table.get("generation", pd.Series("", index=rated_ids)).fillna("").to_numpy(),
            "source_id": rated_ids.to_numpy(),
            "corpus": spec.title,
            "text_available": np.where(table.get("reference", pd.Series(np.nan, index=rated_ids)).notna(),
                                       "yes", "no"),
            "conversation": table.get("conversation", pd.Series("", index=rated_ids)).fillna("").to_numpy(),
            "turns": table.get("turns", pd.Series(np.nan, index=rated_ids)).to_numpy(),
            "response_length": table.get("response_length", pd.Series("", index=rated_ids)).fillna("").to_numpy(),
            "rp_id": table.get("rp_id", pd.Series("", index=rated_ids)).fillna("").to_numpy(),
            "emotion": table.get("emotion", pd.Series("", index=rated_ids)).fillna("").to_numpy(),
            "crowd_n": (crowd_n.reindex(rated_ids).to_numpy() if crowd_n is not None
                        else np.full(len(rated_ids), np.nan)),
            "scale": f"{spec.scale[0]}-{spec.scale[1]}",
            "response_source": extras.get("response_source", pd.Series("", index=rated_ids)).fillna("").to_numpy(),
            "label_shown": extras.get("label_shown", pd.Series("", index=rated_ids)).fillna("").to_numpy(),
        })
        output_parts.append(outputs)
        report.items[spec.name] = {"items": len(rated_ids), "with_text": int((outputs["text_available"] == "yes")
                                                                             .sum())}

        for rater, part in per_rater.items():
            kind, producer = RATERS[rater] if rater in RATERS else SEEKER_RATER[1:]
            rating_parts.append(pd.DataFrame({
                "item_id": spec.name + ":" + part["source_id"],
                "model": spec.name,
                "rater": rater,
                "dimension": part["dimension"].to_numpy(),
                "value": part["value"].astype(float).to_numpy(),
                "rater_kind": kind,
                "reason": part["reason"].to_numpy(),
                "signature": f"{SIGNATURE_PREFIX}:{producer}",
            }))

    outputs = pd.concat(output_parts, ignore_index=True)
    outputs["turns"] = outputs["turns"].astype("Int64")
    outputs["crowd_n"] = outputs["crowd_n"].astype("Int64")
    ratings = pd.concat(rating_parts, ignore_index=True)
    # Run the project's own validators so that what we return is exactly what load_dataset accepts.
    valid_outputs, wide = validate_outputs(outputs, name="kumar2025 outputs")
    valid_ratings = validate_ratings(ratings, name="kumar2025 ratings")
    dataset = build_dataset(valid_outputs, wide, [("kumar2025 ratings", valid_ratings)])
    report.counts = (ratings.assign(corpus=ratings["model"], missing=ratings["value"].isna())
                     .groupby(["corpus", "rater", "dimension"], sort=False)
                     .agg(ratings=("value", "size"), missing=("missing", "sum")).reset_index())
    report.counts["missing"] = report.counts["missing"].astype(int)
    return ImportResult(outputs=outputs, ratings=dataset.ratings, report=report)
