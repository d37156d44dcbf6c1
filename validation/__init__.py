"""Research harnesses that measure the package against external gold data (not part of the runtime package).

``python -m validation.distancing``: the distancing detectors against UD EWT, PassivePy's corpus and the hand
labels in ``tests/data`` (``docs/detectors.md``). Run from the repository root; they read ``tests/data`` and
``../shared``.
"""
