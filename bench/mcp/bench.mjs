// bench.mjs — tabletalk serve-mcp and bytebase/dbhub 1.4 (read-only mode)
// side by side in one run, over stdio, on private copies of the same
// database: start-up time (spawn until initialize and tools/list are
// answered), resident memory after start and after the calls, and the
// latency and server CPU time of N sequential SQL tool calls to each,
// alternating between the servers: the same aggregate N times (the
// issue's Rock 1297 query; tabletalk answers repeats from its result cache
// while the file is unchanged) and N different point lookups (every one
// runs). The client is a minimal
// newline-delimited JSON-RPC client, so its own cost is small and the same
// for both servers. Start-ups alternate between the servers.
//
//   node bench.mjs TABLETALK_BIN DB [--starts 10] [--calls 200] [--json FILE] [--no-cache]
// (--no-cache: tabletalk runs every statement, repeats included)
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const argv = process.argv.slice(2);
const opt = (name, def) => {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : def;
};
const valued = new Set(['--starts', '--calls', '--json']);
const [ttBin, dbArg] = argv.filter((a, i) => !a.startsWith('--') && !valued.has(argv[i - 1]));
if (!ttBin || !dbArg) {
  console.error('usage: node bench.mjs TABLETALK_BIN DB [--starts N] [--calls N] [--json FILE]');
  process.exit(2);
}
const STARTS = Number(opt('--starts', 10));
const CALLS = Number(opt('--calls', 200));
const SQL = 'SELECT g.Name AS genre, count(*) AS tracks FROM Track t JOIN Genre g ' +
  'ON g.GenreId = t.GenreId GROUP BY g.GenreId ORDER BY tracks DESC';

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'tabletalk-mcp-bench-'));
function copyDb(name) {
  const p = path.join(work, name);
  fs.copyFileSync(dbArg, p);
  return p;
}
const ttDb = copyDb('tabletalk.sqlite');
const dbhubDb = copyDb('dbhub.sqlite');
const toml = path.join(work, 'dbhub.toml');
fs.writeFileSync(toml, `[[sources]]\nid = "default"\ndsn = "sqlite://${dbhubDb}"\n\n` +
  '[[tools]]\nname = "execute_sql"\nsource = "default"\nreadonly = true\nmax_rows = 50\n');

const servers = [
  {
    name: 'tabletalk', tool: 'run_sql', cmd: path.resolve(ttBin),
    args: ['serve-mcp', ttDb, '--state-dir', path.join(work, 'state'),
      ...(argv.includes('--no-cache') ? ['--no-cache'] : [])],
  },
  {
    name: 'dbhub 1.4.0', tool: 'execute_sql', cmd: process.execPath,
    args: [path.join(here, 'node_modules/@bytebase/dbhub/dist/index.js'), '--transport', 'stdio',
      '--config', toml],
  },
];

/* One server process and a line-based JSON-RPC client on its stdio. */
class Conn {
  constructor(srv) {
    this.child = spawn(srv.cmd, srv.args, { cwd: work, stdio: ['pipe', 'pipe', 'ignore'] });
    this.buf = '';
    this.waiting = new Map();
    this.nextId = 1;
    this.child.stdout.setEncoding('utf8');
    this.child.stdout.on('data', (d) => {
      this.buf += d;
      let nl;
      while ((nl = this.buf.indexOf('\n')) >= 0) {
        const line = this.buf.slice(0, nl);
        this.buf = this.buf.slice(nl + 1);
        if (!line.trim()) continue;
        const msg = JSON.parse(line);
        const w = this.waiting.get(msg.id);
        if (w) {
          this.waiting.delete(msg.id);
          w(msg);
        }
      }
    });
  }
  request(method, params) {
    const id = this.nextId++;
    return new Promise((resolve) => {
      this.waiting.set(id, resolve);
      this.child.stdin.write(JSON.stringify({ jsonrpc: '2.0', id, method, params }) + '\n');
    });
  }
  notify(method) {
    this.child.stdin.write(JSON.stringify({ jsonrpc: '2.0', method }) + '\n');
  }
  /* CPU time of every thread of the server so far, in ms (the scheduler's
   * nanosecond count, /proc/PID/task/TID/schedstat): what a call costs the
   * server whatever the load, unlike its wall latency. */
  cpuMs() {
    let ns = 0;
    for (const t of fs.readdirSync(`/proc/${this.child.pid}/task`)) {
      try {
        ns += Number(fs.readFileSync(`/proc/${this.child.pid}/task/${t}/schedstat`, 'utf8').split(' ')[0]);
      } catch { /* a thread that ended */ }
    }
    return ns / 1e6;
  }
  rssKiB() {
    const status = fs.readFileSync(`/proc/${this.child.pid}/status`, 'utf8');
    return Number(/VmRSS:\s+(\d+)/.exec(status)[1]);
  }
  close() {
    return new Promise((resolve) => {
      this.child.on('exit', resolve);
      this.child.stdin.end();
      setTimeout(() => this.child.kill('SIGKILL'), 5000).unref();
    });
  }
}

async function start(srv) {
  const t0 = process.hrtime.bigint();
  const c = new Conn(srv);
  const init = await c.request('initialize', {
    protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'bench', version: '1' },
  });
  if (!init.result) throw new Error(`${srv.name}: initialize failed: ${JSON.stringify(init)}`);
  c.notify('notifications/initialized');
  const list = await c.request('tools/list', {});
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  if (!list.result?.tools?.some((t) => t.name === srv.tool))
    throw new Error(`${srv.name}: no ${srv.tool} tool`);
  return { c, ms };
}

const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)];
};
const median = (xs) => pct(xs, 50);

const results = {};
for (const srv of servers) results[srv.name] = { starts: [] };
for (let i = 0; i < STARTS; i++) {
  for (const srv of servers) {
    const { c, ms } = await start(srv);
    results[srv.name].starts.push(ms);
    if (i < STARTS - 1) await c.close();
    else results[srv.name].conn = c;
  }
}
/* The calls alternate between the servers, one call each in turn, so that
 * a loaded machine slows both alike; each call checks its answer. */
async function call(srv, sql, check) {
  const c = results[srv.name].conn;
  const t0 = process.hrtime.bigint();
  const m = await c.request('tools/call', { name: srv.tool, arguments: { sql } });
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  const text = m.result?.content?.[0]?.text ?? '';
  if (m.result?.isError || !check(text))
    throw new Error(`${srv.name}: unexpected result: ${JSON.stringify(m).slice(0, 300)}`);
  return ms;
}
await new Promise((res) => setTimeout(res, 200)); /* let start-up work settle */
for (const srv of servers) {
  const r = results[srv.name];
  r.rssStart = r.conn.rssKiB();
  r.lat = [];
  r.latDistinct = [];
  r.cpu0 = r.conn.cpuMs();
}
for (let i = 0; i < CALLS; i++)
  for (const srv of (i % 2 ? [...servers].reverse() : servers))
    results[srv.name].lat.push(await call(srv, SQL, (t) => /Rock/.test(t) && /1297/.test(t)));
for (const srv of servers) {
  const r = results[srv.name];
  r.rssCalls = r.conn.rssKiB();
  r.cpu1 = r.conn.cpuMs();
}
for (let i = 0; i < CALLS; i++) {
  const sql = `SELECT TrackId, Name, Milliseconds FROM Track WHERE TrackId = ${i + 1}`;
  for (const srv of (i % 2 ? [...servers].reverse() : servers))
    results[srv.name].latDistinct.push(await call(srv, sql, (t) => t.includes(`${i + 1}`)));
}
for (const srv of servers) {
  const r = results[srv.name];
  r.cpu2 = r.conn.cpuMs();
  r.cpuSame = (r.cpu1 - r.cpu0) / CALLS; /* ms of server CPU per call */
  r.cpuDistinct = (r.cpu2 - r.cpu1) / CALLS;
  await r.conn.close();
  delete r.conn;
}
fs.rmSync(work, { recursive: true, force: true });

const tt = results.tabletalk, db = results['dbhub 1.4.0'];
const row = (name, r) => [name, median(r.starts).toFixed(1), (r.rssStart / 1024).toFixed(1),
  (r.rssCalls / 1024).toFixed(1), median(r.lat).toFixed(3), pct(r.lat, 95).toFixed(3),
  r.cpuSame.toFixed(3), median(r.latDistinct).toFixed(3), pct(r.latDistinct, 95).toFixed(3),
  r.cpuDistinct.toFixed(3)];
const ratio = (a, b) => (a / b).toFixed(1) + '×';
const lines = [
  ['server', 'start ms (median)', 'RSS MiB after start', `RSS MiB after ${CALLS} calls`,
    'same query: ms median', 'p95', 'server CPU ms/call', 'distinct queries: ms median', 'p95',
    'server CPU ms/call'],
  row('tabletalk', tt), row('dbhub 1.4.0', db),
  ['dbhub / tabletalk', ratio(median(db.starts), median(tt.starts)), ratio(db.rssStart, tt.rssStart),
    ratio(db.rssCalls, tt.rssCalls), ratio(median(db.lat), median(tt.lat)),
    ratio(pct(db.lat, 95), pct(tt.lat, 95)), ratio(db.cpuSame, tt.cpuSame),
    ratio(median(db.latDistinct), median(tt.latDistinct)),
    ratio(pct(db.latDistinct, 95), pct(tt.latDistinct, 95)), ratio(db.cpuDistinct, tt.cpuDistinct)],
];
console.log(`${STARTS} start-ups each (alternating), ${CALLS} sequential SQL calls each ` +
  `(alternating), ${os.cpus().length} CPUs, load ${os.loadavg()[0].toFixed(1)}, node ${process.version}`);
for (const l of lines) console.log('| ' + l.join(' | ') + ' |');
const jsonOut = opt('--json');
if (jsonOut) fs.writeFileSync(jsonOut, JSON.stringify(results, null, 1));
