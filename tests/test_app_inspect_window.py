"""Inspect's output picker at a lab's scale (issue 25): a window of the outputs around the open one
(empathy_app.views.picker_window) and a number to go to any of them; unchanged when the outputs are few."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

pytest.importorskip("streamlit")
from conftest import app_ok as _ok  # noqa: E402
from conftest import app_texts as _texts  # noqa: E402
from streamlit.testing.v1 import AppTest  # noqa: E402

from empathy_app import session_keys, views  # noqa: E402

APP = str(Path(__file__).resolve().parent.parent / "app.py")
pytestmark = pytest.mark.usefixtures("_store")


@pytest.mark.parametrize(("n", "position", "size", "start"), [
    (10, 0, 4, 0),  # at the top: the first four
    (10, 1, 4, 0),
    (10, 5, 4, 3),  # in the middle: two before it, one after
    (10, 8, 4, 6),
    (10, 9, 4, 6),  # at the end: the last four
    (10, 9, 1, 9),
    (4, 3, 4, 0),  # as many as the window: all
    (4, 2, 10, 0),  # fewer: all
    (1, 0, 1, 0),
])
def test_a_window_holds_the_open_label_and_stays_within_the_list(n, position, size, start):
    labels = [f"label {k}" for k in range(n)]
    got_start, listed = views.picker_window(labels, position, size)
    assert got_start == start
    assert list(listed) == labels[start:start + min(size, n)]
    assert labels[position] in listed


@pytest.mark.parametrize(("n", "position", "size", "message"), [
    (10, 10, 4, "position 10 is outside the 10 labels"),
    (10, -1, 4, "position -1 is outside the 10 labels"),
    (0, 0, 4, "position 0 is outside the 0 labels"),
    (10, 0, 0, "at least one label, got size 0"),
])
def test_a_window_outside_the_list_or_of_no_label_is_refused(n, position, size, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        views.picker_window([f"label {k}" for k in range(n)], position, size)


def _inspect() -> AppTest:
    at = AppTest.from_file(APP, default_timeout=240).run()
    at.switch_page("app_pages/3_Inspect.py").run()
    _ok(at)
    return at


def _position(at: AppTest) -> tuple[int, int]:
    """``(k, n)`` of the caption "Output k of n"."""
    caption = next(c for c in _texts(at.caption) if c.startswith("Output "))
    k, n = re.match(r"Output (\d+) of (\d+) ", caption).groups()
    return int(k), int(n)


def _go(at: AppTest, number: int) -> AppTest:
    at.number_input(key=session_keys.INSPECT_GO_TO).set_value(number).run()
    _ok(at)
    return at


def test_inspect_lists_a_window_of_many_outputs_and_goes_to_any_by_number(monkeypatch):
    every = _inspect().selectbox(key=session_keys.INSPECT_PICK).options  # the demo's outputs, all listed
    n = len(every)
    assert n > 12
    monkeypatch.setattr(views, "PICKER_WINDOW", 5)
    at = _inspect()
    pick = at.selectbox(key=session_keys.INSPECT_PICK)
    assert pick.options == every[:5] and pick.value == every[0] and _position(at) == (1, n)
    box = at.number_input(key=session_keys.INSPECT_GO_TO)
    assert box.value is None and box.max == n and "outputs 1-5 of" in box.label

    # failure path first: a number beyond the box's bounds moves nothing
    _go(at, n + 1)
    assert at.selectbox(key=session_keys.INSPECT_PICK).value == every[0] and _position(at) == (1, n)

    _go(at, 9)  # the 9th output: open, listed two before and two after, the box empty again
    pick = at.selectbox(key=session_keys.INSPECT_PICK)
    assert pick.value == every[8] and pick.options == every[6:11] and _position(at) == (9, n)
    assert at.number_input(key=session_keys.INSPECT_GO_TO).value is None

    pick.set_value(every[10]).run()  # picked in the list: the window follows
    _ok(at)
    assert at.selectbox(key=session_keys.INSPECT_PICK).options == every[8:13] and _position(at) == (11, n)

    _go(at, n)  # the last: the window ends with the list
    assert at.selectbox(key=session_keys.INSPECT_PICK).options == every[-5:] and _position(at) == (n, n)
    at.button(key="inspect_next").click().run()  # and Next goes round to the first
    _ok(at)
    assert at.selectbox(key=session_keys.INSPECT_PICK).value == every[0] and _position(at) == (1, n)


def test_few_outputs_are_all_listed_without_a_number_box():
    at = _inspect()
    assert len(at.selectbox(key=session_keys.INSPECT_PICK).options) == _position(at)[1]
    assert not [box for box in at.number_input if box.key == session_keys.INSPECT_GO_TO]
