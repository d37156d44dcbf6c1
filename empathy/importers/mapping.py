"""Column mapping: read a table whose columns have other names than the data model's.

A mapping is a list of ``SOURCE=TARGET`` pairs (``--columns response=generation`` on the command line, the column
pickers of the app's Data page): the file's column ``SOURCE`` is read as the data model's ``TARGET``. A target
is one of the outputs columns (:data:`MAPPABLE`: ``item_id``, ``model``, ``task``, ``reference``,
``generation``) or a wide rating column ``<rater>:<dimension>`` (``--columns score=gpt:ca``), so any table can be
read without rewriting it; a data-model column may also be moved aside under a metadata name
(``generation=old_generation``) so that another column can take its place. Every other column is kept under its
own name as metadata.

The mapping is checked against the table before anything is renamed, and every problem is a
:class:`empathy.files.DataError` naming the file and the column: a source the file does not have (with the
reverse hint when ``TARGET=SOURCE`` was meant), a target that is neither a data-model column nor a wide rating
column, two sources onto one target, one source twice, and a target that the file already has under that name
while another column is mapped onto it. :meth:`ColumnMap.signature_value` is how a results table's signature
records the mapping (``columns:response=generation``), so two tables computed from different readings of the
same file never share a signature.

Importing this module is cheap (no pandas at module level): the command line parses ``--columns`` at start-up speed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from empathy.files import DataError
from empathy.identifiers import identifier_problem

if TYPE_CHECKING:
    import pandas as pd

#: The outputs columns a mapping may target (besides wide ``<rater>:<dimension>`` rating columns).
MAPPABLE: tuple[str, ...] = ("item_id", "model", "task", "reference", "generation")
_WIDE = ":"


@dataclass(frozen=True)
class ColumnMap:
    """Which column of a file is read as which data-model column, in the order given.

    ``pairs`` holds ``(source, target)``; build one with :meth:`parse` (from ``SOURCE=TARGET`` texts) or
    :meth:`of` (from a ``{source: target}`` mapping).
    """

    pairs: tuple[tuple[str, str], ...] = ()

    @classmethod
    def parse(cls, entries: Iterable[str] | None, *, option: str = "--columns") -> ColumnMap:
        """The mapping of ``SOURCE=TARGET`` entries; ``ValueError`` naming ``option`` for a malformed one.

        Several pairs may share one entry, separated by commas (``--columns a=reference,b=generation``).
        """
        pairs: list[tuple[str, str]] = []
        for entry in entries or ():
            for part in str(entry).split(","):
                if not part.strip():
                    continue
                source, equals, target = part.partition("=")
                if not equals or not source.strip() or not target.strip():
                    raise ValueError(f"{option}: {part.strip()!r} is not SOURCE=TARGET (e.g. {option} "
                                     "response=generation: the file's column 'response' read as 'generation')")
                pairs.append((source.strip(), target.strip()))
        return cls.of_pairs(pairs, option=option)

    @classmethod
    def of(cls, mapping: Mapping[str, str] | None) -> ColumnMap:
        """The mapping of a ``{source: target}`` dict (checked as :meth:`parse` checks)."""
        return cls.of_pairs(list((mapping or {}).items()))

    @classmethod
    def of_pairs(cls, pairs: Iterable[tuple[str, str]], *, option: str = "--columns") -> ColumnMap:
        """The mapping of ``(source, target)`` pairs, checked: each source and each target once, every target
        a data-model column or a wide rating column; ``ValueError`` naming ``option`` otherwise."""
        checked: list[tuple[str, str]] = []
        sources: set[str] = set()
        targets: dict[str, str] = {}
        for source, target in pairs:
            source, target = str(source).strip(), str(target).strip()
            aside = source in MAPPABLE and target not in MAPPABLE and not _is_wide(target)
            if target not in MAPPABLE and not _is_wide(target) and not aside:
                raise ValueError(f"{option}: unknown target {target!r} in {source}={target}; map onto one of "
                                 f"{', '.join(MAPPABLE)} or a rating column '<rater>:<dimension>' (or move a "
                                 "data-model column aside: generation=old_generation)")
            problem = identifier_problem(target) if _is_wide(target) or aside else None
            if problem:
                raise ValueError(f"{option}: target {target!r}: {problem}")
            if source in sources:
                raise ValueError(f"{option}: column {source!r} is mapped twice")
            if target in targets:
                raise ValueError(f"{option}: {targets[target]!r} and {source!r} are both mapped onto {target!r}")
            sources.add(source)
            targets[target] = source
            checked.append((source, target))
        return cls(tuple(checked))

    def __bool__(self) -> bool:
        return bool(self.pairs)

    def as_dict(self) -> dict[str, str]:
        """``{source: target}`` in the order given."""
        return dict(self.pairs)

    def source_of(self, target: str) -> str | None:
        """The column mapped onto ``target``, or ``None``."""
        return next((s for s, t in self.pairs if t == target), None)

    def over(self, defaults: ColumnMap) -> ColumnMap:
        """These pairs, then every pair of ``defaults`` whose source and target this mapping leaves alone
        (an importer's default reading, overridden target by target by the user's ``--columns``)."""
        sources = {s for s, _ in self.pairs}
        targets = {t for _, t in self.pairs}
        kept = [(s, t) for s, t in defaults.pairs if s not in sources and t not in targets]
        return ColumnMap(self.pairs + tuple(kept))

    def signature_value(self) -> str:
        """The mapping as one signature field's value: ``response=generation,prompt=reference`` (sorted by
        target, so the same reading gives the same signature whatever order the pairs were given in; a column
        read under its own name is left out)."""
        return ",".join(f"{s}={t}" for s, t in sorted(self.pairs, key=lambda pair: pair[1]) if s != t)

    def signature_fields(self) -> dict[str, str]:
        """``{"columns": ...}`` for :class:`empathy.signature.Signature` ``extra``; empty for no mapping."""
        return {"columns": self.signature_value()} if self.pairs else {}

    def check(self, columns: Iterable[str], label: str, *, header_row: int | None = None) -> None:
        """Raise :class:`DataError` naming ``label`` and the column unless the mapping applies to a table with
        ``columns``: every source present, and no target already present under its own name unless that column
        is mapped away too."""
        present = [str(c) for c in columns]
        names = set(present)
        sources = {s for s, _ in self.pairs}
        for source, target in self.pairs:
            if source in names:
                continue
            hint = ""
            if target in names and source in MAPPABLE:
                hint = f"; did you mean {target}={source} (SOURCE=TARGET: the file's column first)?"
            shown = ", ".join(repr(c) for c in present[:12]) + (", ..." if len(present) > 12 else "")
            raise DataError(label, f"column mapping {source}={target}: the table has no column {source!r} "
                            f"(its columns: {shown}){hint}", row=header_row, column=source)
        for source, target in self.pairs:
            if target in names and target != source and target not in sources:
                raise DataError(label, f"column mapping {source}={target}: the table already has a column "
                                f"{target!r}; map it away too (e.g. {target}=old_{target}) or drop the mapping",
                                row=header_row, column=target)

    def apply(self, frame: pd.DataFrame, *, name: str | None = None) -> pd.DataFrame:
        """``frame`` with its mapped columns renamed (a new frame; the file's row numbers and name kept in
        ``attrs`` so that later errors still name the file's rows). An empty mapping returns ``frame``.

        A column mapped away whose old name no target takes (``a=generation`` where ``generation`` was mapped
        to ``old_generation``) is renamed, never dropped: nothing the file holds is lost.
        """
        if not self.pairs:
            return frame
        label = frame.attrs.get("source", name or "<table>")
        header = 1 if frame.attrs.get("suffix", ".csv") == ".csv" else None
        self.check(frame.columns, label, header_row=header)
        renamed = frame.rename(columns=self.as_dict())
        renamed.attrs = dict(frame.attrs)
        renamed.attrs["columns"] = self.signature_value()
        return renamed


def _is_wide(name: str) -> bool:
    rater, separator, dimension = name.partition(_WIDE)
    return bool(separator and rater.strip() and dimension.strip())


def columns_option_help() -> str:
    """The ``--columns`` help text shared by every command that reads outputs."""
    return ("read the file's column SOURCE as TARGET (one of " + ", ".join(MAPPABLE) + ", or a rating column "
            "'<rater>:<dimension>'); repeatable or comma-separated, e.g. "
            "--columns response=generation,prompt=reference; "
            "recorded in the signature as 'columns:'")


__all__ = ["MAPPABLE", "ColumnMap", "columns_option_help"]
