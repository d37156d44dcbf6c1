"""How the app puts data strings into Markdown, chart labels and CSV downloads (see :mod:`empathy.escaping`).

Rule of the app: every text from data (texts, model, rater, item, task and file names, error messages that
quote them) reaches Streamlit through one of these:

- :func:`md` (:func:`empathy.escaping.markdown_literal`) in ``st.markdown``/``st.caption``/``st.success``/
  ``st.info``/``st.error``/``st.warning`` messages, subheaders, expander, button and widget labels and
  ``help`` tooltips, and in the one-shot ``flash`` messages of the session state (which hold Markdown, so
  their data parts are escaped when the message is composed);
- :func:`code` for a name shown as inline code (exact, see there);
- :func:`html` (:func:`empathy.escaping.html_literal`) in every Plotly title, axis, legend, hover and text
  label that shows data, and :func:`plot_frame` for the data columns a Plotly Express chart labels with;
- :func:`people_csv` for CSV files offered to people (spreadsheet formula cells neutralised).

Tables (``st.dataframe``) and ``st.code`` show text verbatim and need none of this.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import pandas as pd

from empathy.escaping import html_literal, markdown_literal, spreadsheet_cell

md = markdown_literal
html = html_literal


_BACKTICKS = re.compile(r"`+")


def code(text: object) -> str:
    """``text`` as a Markdown inline code span that shows it exactly.

    Nothing is parsed inside a code span (no emphasis, link, image, HTML, maths or Streamlit directive), so
    the span only has to be impossible to close early: its fence is one backtick longer than the longest run
    of backticks in the text, and a space pads a text that starts or ends with a backtick or a space (the
    span then strips exactly that space, CommonMark 6.1). Line breaks show as spaces. Text that is empty or
    only spaces (no code span can hold it) is returned through :func:`md`.
    """
    value = " ".join(str(text).splitlines())
    if not value.strip():
        return md(value)
    fence = "`" * (max((len(run) for run in _BACKTICKS.findall(value)), default=0) + 1)
    if value[0] in "` " or value[-1] in "` ":
        value = f" {value} "
    return f"{fence}{value}{fence}"


def codes(values: Iterable[object]) -> str:
    """Comma-separated :func:`code` spans."""
    return ", ".join(code(v) for v in values)


def plot_frame(frame: pd.DataFrame, columns: Iterable[str]) -> pd.DataFrame:
    """A copy of ``frame`` with the text ``columns`` HTML-escaped for Plotly labels (ticks, legend, hover)."""
    return frame.assign(**{c: frame[c].map(html) for c in columns if c in frame.columns})


def hover_literal(text: object) -> str:
    """:func:`html` plus ``%`` escaped, for text inside a Plotly ``hovertemplate`` (``%{...}`` is a field)."""
    return html(text).replace("%", "&#37;")


def people_csv(frame: pd.DataFrame) -> bytes:
    """``frame`` as UTF-8 CSV for spreadsheets: text cells that start a formula get a leading ``'``.

    Only cells holding strings are changed (numbers stay numbers); :func:`empathy.escaping.unspreadsheet_cell`
    restores each exactly. Column names are text from data too and are neutralised the same way.
    """
    out = frame.copy()
    for column in out.columns:
        if out[column].dtype == object or pd.api.types.is_string_dtype(out[column]):
            out[column] = out[column].map(lambda v: spreadsheet_cell(v) if isinstance(v, str) else v)
    out.columns = [spreadsheet_cell(str(c)) for c in out.columns]
    return out.to_csv(index=False).encode()
