// farserve.mjs ADDR PORT:TEXT... — the test internet's servers for net.test.mjs and
// legacy08.test.mjs: run.sh starts this inside the internet namespace it makes (one veth away
// from the namespace the tests and the executor run in), so what the sandbox reaches at ADDR is
// the network, not the caller's host.  Each connection gets TEXT and a newline; "ready" goes to
// stdout once every port listens; it runs until run.sh ends it.
import net from 'node:net';

const [addr, ...specs] = process.argv.slice(2);
await Promise.all(specs.map((spec) => {
  const [port, text] = spec.split(':');
  const s = net.createServer((c) => { c.end(`${text}\n`); });
  return new Promise((resolve) => s.listen(+port, addr, resolve));
}));
process.stdout.write('ready\n');
