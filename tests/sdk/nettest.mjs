// What net.test.mjs and legacy08.test.mjs share: the guard that they run inside the host namespace
// run.sh makes, the host's own (loopback) servers, and the shell probe a sandbox runs.  The test
// internet's servers at WEB (8080: WEB8080, 8081: WEB8081) are run.sh's (farserve.mjs, one veth
// away).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import net from 'node:net';

export const WEB = process.env.MXC_NET_TEST_ADDR;
const HOST_ADDR = process.env.MXC_NET_TEST_HOST_ADDR;
assert.ok(WEB && WEB.startsWith('198.51.100.') && HOST_ADDR && HOST_ADDR.startsWith('198.51.100.'),
  'run by run.sh inside its own namespaces (MXC_NET_TEST_ADDR, MXC_NET_TEST_HOST_ADDR)');
// never run in the real host's namespace: the test's host has HOST_ADDR on a local interface
assert.ok(fs.readFileSync('/proc/net/fib_trie', 'utf8').includes(HOST_ADDR), 'not inside the test namespace');

// Servers answering one line each, closed after the file's tests: [[host, port, text], ...].
export async function serveAll(list) {
  const servers = [];
  for (const [host, port, text] of list) {
    const s = net.createServer((c) => { c.end(text); });
    await new Promise((resolve) => s.listen(port, host, resolve));
    servers.push(s);
  }
  test.after(() => servers.forEach((s) => s.close()));
}

// One line per target: what it read, or FAIL.
export function probe(...targets) {
  return targets.map((t) => {
    const [a, p] = t.split(':');
    return `if out=$(timeout 5 bash -c 'exec 3<>/dev/tcp/${a}/${p} && head -n1 <&3' 2>/dev/null) && [ -n "$out" ]; ` +
      `then echo "${t} $out"; else echo "${t} FAIL"; fi`;
  }).join('; ');
}
