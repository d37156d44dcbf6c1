// Runs the key queue's live-table arithmetic (empathy_app/static/keyqueue/live_table.js) under Node for
// tests/test_keyqueue_live.py: reads {"cases": [...]} as JSON on stdin, prints one result per case as JSON.
//
// A case is {live, events}: the table of those events (liveTable), or {live, items, keys}: keys pressed on the
// window `items` as the page's script presses them ([index of the entry, value decided] each; the effect of
// a key kept with its event by keyEffect), answered with the table before any key and after each one, and the
// events. A case that throws is answered with {error: message}.
// Usage: node tests/keyqueue_live.mjs [module]  (module: another build of the functions, e.g. the inlined script)
import {readFileSync} from 'node:fs';
import {resolve} from 'node:path';
import {pathToFileURL} from 'node:url';

const where = process.argv[2]
  ? pathToFileURL(resolve(process.argv[2])).href
  : new URL('../empathy_app/static/keyqueue/live_table.js', import.meta.url).href;
const {keyEffect, liveTable} = await import(where);

function press(live, items, keys) {
  const events = [];
  const tables = [liveTable(live, events)];
  for (const [index, value] of keys) {
    const event = {seq: events.length + 1, action: 'decide', value};
    const fx = keyEffect(live, items[index], value);
    if (fx) event.fx = fx;
    events.push(event);
    tables.push(liveTable(live, events));
  }
  return {tables, events};
}

function run(c) {
  try {
    return c.keys === undefined ? liveTable(c.live, c.events) : press(c.live, c.items, c.keys);
  } catch (error) {
    return {error: `${error.name}: ${error.message}`};
  }
}

const {cases} = JSON.parse(readFileSync(0, 'utf8'));
process.stdout.write(JSON.stringify(cases.map(run)));
