"""AppTest helpers for the Relabel page's key queue (``empathy_app.keyqueue``): what the browser shows and sends.

The page's component shows a window of outputs in the browser and sends numbered events, each naming the output
it was made on; AppTest runs no JavaScript, so these read the window the page sent and set the component's
state as the browser would.
"""

from __future__ import annotations

import json

from empathy_app.keyqueue import ACKED, KEY


def window(at) -> dict:
    """The data the Relabel page sent to its queue component (``items``: the outputs, first = on screen)."""
    found = [c for c in at.get("bidi_component") if c.proto.component_name.endswith("empathy_relabel_queue")]
    if not found:
        raise AssertionError("no key queue on the page")
    return json.loads(found[0].proto.json)


def live(at) -> dict | None:
    """The live metric's state the page sent with the window (``None`` when the page draws the table itself)."""
    return window(at)["live"]


def live_table(state: dict, events: list[dict] = ()) -> list[tuple[int | None, str, float | None, int]]:
    """(rank, model, value, n) as the browser is to draw them: the server's sums and counts plus the effects of the
    events not yet acknowledged, ranked by the one rank convention (``empathy.vocabulary.RANK_CONVENTION``): rank
    1 = the best value in the payload's direction ``better`` ("lower": the smallest), tied values share the
    smaller rank (1, 1, 3), a model without a value has none; rows by rank, then model. Written out by hand here,
    not with ``empathy.evaluate.rank_by_direction``, so that the server's ranking is checked against it."""
    sums = {m["model"]: [m["sum"], m["n"]] for m in state["models"]}
    for event in events:
        fx = event.get("fx")
        if event.get("action") != "decide" or not fx or fx["scope"] != state["scope"] or fx["m"] not in sums:
            continue
        after, before = fx["after"], fx["before"]
        sums[fx["m"]][0] += (after or 0) - (before or 0)
        sums[fx["m"]][1] += (after is not None) - (before is not None)
    rows = [(model, total / n if n else None, n) for model, (total, n) in sums.items()]
    sign = {"lower": 1.0, "higher": -1.0}[state.get("better", "higher")]  # as the script: absent = highest first

    def rank(value: float | None) -> int | None:
        if value is None:
            return None
        return 1 + sum(1 for _, other, _ in rows if other is not None and sign * other < sign * value)

    ranked = [(rank(value), model, value, n) for model, value, n in rows]
    return sorted(ranked, key=lambda r: (r[0] is None, r[0] or 0, r[1]))


def on_screen(at) -> tuple[str, str]:
    """(item_id, model) of the output the browser shows (the window's first)."""
    items = window(at)["items"]
    if not items:
        raise AssertionError("the queue shows no output")
    return items[0]["item"], items[0]["model"]


def press(at, value: float | None = None, *, action: str = "decide", item: tuple[str, str] | None = None,
          client: str = "apptest", run: bool = True, **changes):
    """Send one event as the browser does: for the output on screen (or ``item`` of the window, as a late key
    would name it), numbered after the last one the page acknowledged; ``changes`` alter its fields."""
    data = window(at)
    entries = {(e["item"], e["model"]): e for e in data["items"]}
    entry = entries[item] if item is not None and item in entries else data["items"][0] if data["items"] else {}
    if item is not None and item not in entries:
        entry = {"item": item[0], "model": item[1], "hash": "", "issued": ""}
    seq = int(dict(at.session_state[ACKED]).get(client, 0)) + 1 if ACKED in at.session_state else 1
    event = {"seq": seq, "action": action, "dimension": data["dimension"], "apply_to": data["apply_to"],
             "annotator": data["annotator"]}
    if action != "undo":
        event.update(item=entry["item"], model=entry["model"], hash=entry["hash"], issued=entry["issued"])
    if action == "decide":
        event["value"] = value
    event.update(changes)
    at.session_state[KEY] = {"events": {"client": client, "events": [event]}}
    return at.run() if run else at
