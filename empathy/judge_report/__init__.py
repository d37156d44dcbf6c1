"""The judge report: can this judge replace the annotators, on which dimension, and where does it break.

One module per concept:

* :mod:`empathy.judge_report.alt_test`: the Alternative Annotator Test (Calderon, Reichart & Dror, ACL 2025):
  leave one human out, does the judge or the excluded human agree better with the remaining humans;
* :mod:`empathy.judge_report.verdict`: one verdict line per judge and dimension, with its signature, for the
  report and its CSV / JSON export.

Nothing here imports streamlit; the app's page (``app_pages/11_Judge_report.py``) draws what these compute.
"""

from __future__ import annotations
