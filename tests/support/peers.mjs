// peers.mjs — raw TCP peers for the tests of the HTTP servers' guard
// (tests/mcp/peers.test.mjs for serve-mcp --http, tests/agent/web_peers.test.mjs
// for tabletalk web): a peer that trickles its headers one byte at a time, as
// the attack that locked the token holder out did, and a raw exchange whose
// every byte the test sees (to count status lines, which a client library
// would hide). Waits are on socket events: connect, data, close.
import net from 'node:net';

/* Connects to 127.0.0.1:port and writes `head` one byte every `everyMs`,
 * then 'a' after 'a' (an endless header value), never ending the headers,
 * until the server closes the connection. {connected, closed, sent()}:
 * connected resolves once connected; closed with every byte the server
 * sent, once the socket has closed. */
export function trickle(port, head, { everyMs = 100 } = {}) {
  const sock = net.connect({ host: '127.0.0.1', port });
  const chunks = [];
  let sent = 0;
  let timer = null;
  const connected = new Promise((resolve, reject) => {
    sock.once('connect', resolve);
    sock.once('error', reject);
  });
  sock.on('connect', () => {
    timer = setInterval(() => {
      if (!sock.writable) return;
      sock.write(sent < head.length ? head[sent] : 'a');
      sent++;
    }, everyMs);
  });
  sock.on('data', (d) => chunks.push(d));
  sock.on('error', () => { /* the server closed it: 'close' follows */ });
  const closed = new Promise((resolve) => sock.once('close', () => {
    clearInterval(timer);
    resolve(Buffer.concat(chunks));
  }));
  return { sock, connected, closed, sent: () => sent };
}

/* Connects, writes each of `parts` (strings or Buffers) in turn and
 * resolves with every byte the server sent once the connection has
 * closed (a write the server no longer reads is no failure: the answer
 * is what counts). */
export function exchange(port, parts) {
  return new Promise((resolve) => {
    const sock = net.connect({ host: '127.0.0.1', port });
    const chunks = [];
    sock.on('data', (d) => chunks.push(d));
    sock.on('error', () => { /* reset after the answer: 'close' follows */ });
    sock.on('close', () => resolve(Buffer.concat(chunks)));
    sock.on('connect', () => { for (const p of parts) sock.write(p); });
  });
}

/* How many times `what` occurs in buf. */
export function occurrences(buf, what) {
  let n = 0;
  for (let i = buf.indexOf(what); i >= 0; i = buf.indexOf(what, i + 1)) n++;
  return n;
}

/* The first response in raw bytes: {status, headers (lower-case names),
 * body} (a body up to its Content-Length, else to the end). */
export function firstResponse(buf) {
  const text = buf.toString('latin1');
  const end = text.indexOf('\r\n\r\n');
  if (end < 0) return { status: 0, headers: {}, body: '' };
  const [statusLine, ...lines] = text.slice(0, end).split('\r\n');
  const headers = {};
  for (const l of lines) {
    const i = l.indexOf(':');
    headers[l.slice(0, i).trim().toLowerCase()] = l.slice(i + 1).trim();
  }
  const rest = text.slice(end + 4);
  const len = headers['content-length'] !== undefined ? Number(headers['content-length']) : rest.length;
  return { status: Number(statusLine.split(' ')[1]), headers, body: rest.slice(0, len) };
}
