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
    found = at.get("bidi_component")
    if not found:
        raise AssertionError("no key queue on the page")
    return json.loads(found[0].proto.json)


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
