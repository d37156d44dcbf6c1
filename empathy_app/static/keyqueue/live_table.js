// The live metric beside the Relabel key queue, as arithmetic only (no DOM, no browser state): the page's script
// (queue.js) draws what these functions return, and tests/test_keyqueue_live.py runs them under Node against the
// server's recomputation of the same decisions (empathy.review.Recompute), so the two cannot drift.
//
// The metric is a mean of labels per model (CA, Eq. 3 of the paper). The server sends, per model, the sum and
// the count of its usable labels (`live.models`) and, with each output of the window, the label the metric uses
// now and after each level a key may decide (`entry.fx`, from empathy.overrides.decision_effects under the
// session's label rule). A key moves its model's sum by `after - before` and its count by which of the two is
// missing (null).

const hasOwn = (object, key) => Object.prototype.hasOwnProperty.call(object, key);

// Rank 1 is the best value: `live.better` says whether that is the lowest ("lower") or the highest ("higher").
const SIGNS = Object.freeze({lower: 1, higher: -1});

/**
 * Which value ranks first: `live.better`, or "higher" when the server does not say (the order this table had
 * before the metric registry gave each metric a direction).
 * @param {{better?: string}} live the live metric's state sent by the server
 * @returns {"lower" | "higher"} the direction
 */
export function direction(live) {
  const better = live.better === undefined ? 'higher' : live.better;
  if (typeof better !== 'string' || !hasOwn(SIGNS, better)) {
    throw new TypeError(`live metric: "better" must be "lower" or "higher", got ${JSON.stringify(better)}`);
  }
  return better;
}

/**
 * Python's order of two strings (by code point), which the server's tables follow; JavaScript's `<` compares
 * UTF-16 code units and so puts a character above U+FFFF before one in U+E000..U+FFFF.
 * @param {string} a a model name
 * @param {string} b another
 * @returns {number} negative, zero or positive
 */
export function compareNames(a, b) {
  let i = 0;
  while (i < a.length && i < b.length) {
    const x = a.codePointAt(i);
    const y = b.codePointAt(i);
    if (x !== y) return x < y ? -1 : 1;
    i += x > 0xffff ? 2 : 1;
  }
  return (i < a.length) - (i < b.length);
}

/**
 * Rows ranked by the server's one rank convention (empathy.vocabulary.RANK_CONVENTION): rank 1 is the best value
 * (see `direction`), tied values share the smaller rank (1, 1, 3: RANK_TIES "min"), a model without a value has
 * no rank (null); rows are ordered best first, those without a value last, ties by model name.
 * @param {{model: string, value: number | null}[]} rows one per model
 * @param {"lower" | "higher"} better which value ranks first
 * @returns {{model: string, value: number | null, rank: number | null}[]} the ranked rows
 */
export function rankRows(rows, better) {
  const sign = SIGNS[direction({better})];
  const ranked = [...rows].sort((x, y) => ((x.value === null) - (y.value === null))
    || sign * (x.value - y.value) || compareNames(x.model, y.model));
  return ranked.map((row) => ({
    ...row,
    rank: row.value === null ? null
      : 1 + ranked.filter((other) => other.value !== null && sign * other.value < sign * row.value).length,
  }));
}

/**
 * The effect a key deciding `value` on window entry `entry` has on the table, to be kept with the key's event;
 * null when it has none (no live metric, or the decision does not reach the judge or task shown).
 * @param {object | null} live the live metric's state
 * @param {{fx?: {m: string, b: number | null, a: Object<string, number | null>}}} entry the window's output
 * @param {number} value the level decided
 * @returns {{scope: string, m: string, before: number | null, after: number | null} | null} the effect
 */
export function keyEffect(live, entry, value) {
  if (!live || !entry || !entry.fx || !hasOwn(entry.fx.a, String(value))) return null;
  return {scope: live.scope, m: entry.fx.m, before: entry.fx.b, after: entry.fx.a[String(value)]};
}

/**
 * The table: the server's sums and counts with the effect of every decision in `events` (those not yet
 * acknowledged) added, ranked. Events of another scope (judge, task, label rule) or model are left out.
 * @param {object | null} live the live metric's state (`models`: {model, sum, n}; `scope`; `better`)
 * @param {object[]} events the queue's events (`action`, and `fx` from `keyEffect` for a decision)
 * @returns {{rows: {model: string, value: number | null, n: number, rank: number}[], pending: number} | null}
 *   the ranked rows and how many decisions they include; null without a live metric
 */
export function liveTable(live, events) {
  if (!live) return null;
  const sums = new Map(live.models.map((r) => [r.model, {sum: r.sum, n: r.n}]));
  let pending = 0;
  for (const e of events) {
    if (e.action !== 'decide' || !e.fx || e.fx.scope !== live.scope || !sums.has(e.fx.m)) continue;
    const s = sums.get(e.fx.m);
    s.sum += (e.fx.after === null ? 0 : e.fx.after) - (e.fx.before === null ? 0 : e.fx.before);
    s.n += (e.fx.after === null ? 0 : 1) - (e.fx.before === null ? 0 : 1);
    pending += 1;
  }
  const rows = [...sums].map(([model, s]) => ({model, n: s.n, value: s.n > 0 ? s.sum / s.n : null}));
  return {rows: rankRows(rows, direction(live)), pending};
}
