// The leak check of private mode (docs/guide/private.md): is any value of a
// database in what was sent to the model? Needles are every distinct text
// value of 4 characters or more and every number the database holds; a
// request body (all of its strings, walked) is searched for them, except
//  - what the user typed (the questions, which may name values),
//  - the schema (the tables' CREATE statements: their names and the
//    numbers in their types),
//  - what the model wrote itself (assistant messages and tool calls: its
//    SQL and its answers with references),
//  - in the rules and tool descriptions, which are fixed text, numbers
//    only, and in tool results the row counts a result's shape states
//    ("3 rows", "more than 200 rows"), which private mode sends by design.
// Numbers are matched as whole tokens (not digits inside q12 or 2024-01-05
// parts: the date as a whole is a text needle); texts as substrings, case
// and all.
import { sqliteRows } from './harness.mjs';

/* {texts: Set, numbers: Set (as strings, canonical), ddl: string} of db. */
export async function databaseValues(db) {
  const tables = await sqliteRows(db, "SELECT name, sql FROM sqlite_master WHERE type = 'table' AND sql IS NOT NULL");
  const texts = new Set(), numbers = new Set();
  let ddl = '';
  for (const [name, sql] of tables) {
    ddl += `${sql}\n`;
    const rows = await sqliteRows(db, `SELECT * FROM "${name.replaceAll('"', '""')}"`);
    for (const row of rows) for (const v of row) {
      if (typeof v === 'number') numbers.add(String(v));
      else if (typeof v === 'string') {
        const t = v.trim();
        if (t.length >= 4) texts.add(t);
        if (/^-?\d+(\.\d+)?$/.test(t)) numbers.add(String(Number(t)));
      }
    }
  }
  return { texts, numbers, ddl };
}

/* Every string in a JSON value, with the role of the message it is in
 * ("system", "user", "tool", "assistant", or "tools" for tool definitions). */
function strings(body) {
  const out = [];
  const walk = (v, role) => {
    if (typeof v === 'string') out.push({ role, s: v });
    else if (Array.isArray(v)) v.forEach((x) => walk(x, role));
    else if (v && typeof v === 'object') for (const x of Object.values(v)) walk(x, role);
  };
  for (const m of body?.messages ?? []) {
    walk(m.content, m.role);
    if (m.tool_calls) walk(m.tool_calls, 'assistant');
  }
  walk(body?.tools ?? [], 'tools');
  return out;
}

const NUMBER = /(?<![\w.\-:/])-?\d+(?:\.\d+)?(?![\w.:/-]|\.\d)/g;

/* The fixed rules of the system prompt: its text before the schema. */
const rulesOf = (s) => s.split(/\nDatabase (schema|tables) \(/)[0];

/* Leaks of vals in the request bodies: [{value, role, request, context}]. */
export function findLeaks(bodies, vals, questions) {
  const asked = questions.join('\n');
  const allowedNumbers = new Set();
  for (const t of [asked, vals.ddl]) for (const m of t.matchAll(NUMBER)) allowedNumbers.add(String(Number(m[0])));
  const texts = [...vals.texts].filter((t) => !asked.includes(t) && !vals.ddl.includes(t));
  const leaks = [];
  bodies.forEach((body, request) => {
    const own = new Set(); // numbers the model wrote, the rules state, or a shape counts
    const parts = strings(body);
    for (const { role, s } of parts) {
      const fixed = role === 'assistant' || role === 'tools' ? s : role === 'system' ? rulesOf(s) : '';
      for (const m of fixed.matchAll(NUMBER)) own.add(String(Number(m[0])));
      if (role === 'tool' || role === 'assistant' || role === 'user') {
        for (const m of s.matchAll(/(?:^|[\s(:])(?:more than )?(\d+) rows?\b/g)) own.add(String(Number(m[1])));
        // the agent's own counters: "(failed queries in a row: 1 of 3)"
        for (const m of s.matchAll(/failed queries in a row: (\d+) of (\d+)|That was (\d+) failed/g))
          for (const g of m.slice(1)) if (g) own.add(String(Number(g)));
      }
    }
    for (const { role, s } of parts) {
      if (role === 'assistant') continue;
      let hay = s;
      for (const q of questions) hay = hay.split(q).join(' ');
      for (const t of texts) {
        const at = hay.indexOf(t);
        if (at >= 0) leaks.push({ value: t, role, request, context: hay.slice(Math.max(0, at - 40), at + t.length + 40) });
      }
      if (role === 'tools') continue;
      for (const m of hay.matchAll(NUMBER)) {
        const n = String(Number(m[0]));
        if (vals.numbers.has(n) && !allowedNumbers.has(n) && !own.has(n))
          leaks.push({ value: m[0], role, request, context: hay.slice(Math.max(0, m.index - 40), m.index + m[0].length + 40) });
      }
    }
  });
  return leaks;
}
