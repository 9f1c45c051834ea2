// Issue 14 through the published SDK (a multi-threaded in-process caller: the workload is started
// by C1's holder, which waits for the rules and the route): MXC's connectivity models from Node.
//
// NETWORK SAFETY.  run.sh runs this file inside a network namespace it creates (`ip netns add`):
// its loopback is the "host loopback" the userspace stack would map, and one veth away a second
// namespace of run.sh's (the test internet) carries the documentation-range address WEB with the
// servers bound to it.  The sandbox only ever addresses 10.0.2.x (the stack's side) and WEB;
// nothing leaves those namespaces.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as mxc from '@microsoft/mxc-sdk/v1';
import { WEB, probe, serveAll } from './nettest.mjs';

await serveAll([['127.0.0.1', 8082, 'LOOPBACK\n'], ['127.0.0.1', 3128, 'PROXY\n']]);

test('the SDK README\'s first example, unchanged, is model 3', async () => {
  if (!mxc.getPlatformSupport().isSupported) {
    throw new Error('MXC is not available on this host');
  }
  const request = {
    filesystem: { readonlyPaths: [process.cwd()] },
    network: { egress: { default: 'deny' } },
    timeoutMs: 30_000,
    command: 'node -e "console.log(\'hello from container\')"',
  };
  const output = await mxc.run(request);
  assert.equal(output.exitCode, 0, output.stderr);
  assert.equal(output.stdout, 'hello from container\n');
});

test('model 1 from Node: egress allow reaches the test internet, never host loopback', async () => {
  const r = await mxc.run({
    command: probe(`${WEB}:8080`, '10.0.2.2:8082', '127.0.0.1:8082'),
    network: { egress: { default: 'allow' } },
    timeoutMs: 60_000,
  });
  assert.equal(r.stdout, `${WEB}:8080 WEB8080\n10.0.2.2:8082 FAIL\n127.0.0.1:8082 FAIL\n`, r.stderr);
});

test('model 1 from Node: an allow rule for one port, nothing else', async () => {
  const network = {
    egress: { default: 'deny', allow: [{ to: [{ cidr: `${WEB}/32` }], ports: [{ protocol: 'tcp', port: 8080 }] }] },
  };
  const cmd = probe(`${WEB}:8080`, `${WEB}:8081`);
  const r = await mxc.run({ command: cmd, network, timeoutMs: 60_000 });
  assert.equal(r.stdout, `${WEB}:8080 WEB8080\n${WEB}:8081 FAIL\n`, r.stderr);
  // spawn takes the same path
  const p = await mxc.spawn({ command: cmd, network, timeoutMs: 60_000 });
  try {
    const out = p.standardOutput;
    out.setEncoding('utf8');
    let s = '';
    out.on('data', (d) => { s += d; });
    const res = await p.wait();
    await new Promise((resolve) => (out.readableEnded ? resolve() : out.on('end', resolve)));
    assert.equal(res.exitCode, 0);
    assert.equal(s, `${WEB}:8080 WEB8080\n${WEB}:8081 FAIL\n`);
  } finally {
    p.dispose();
  }
});

test('model 2 from Node: only the proxy endpoint, and the proxy variables name it', async () => {
  const cmd = probe('10.0.2.2:3128', '10.0.2.2:8082', `${WEB}:8080`) + '; echo "$HTTP_PROXY $https_proxy [$NO_PROXY]"';
  const r = await mxc.run({ command: cmd, network: { runtimeConfig: { networkProxy: 'http://127.0.0.1:3128' } }, timeoutMs: 60_000 });
  assert.equal(r.stdout, '10.0.2.2:3128 PROXY\n10.0.2.2:8082 FAIL\n' + `${WEB}:8080 FAIL\n` +
    'http://10.0.2.2:3128/ http://10.0.2.2:3128/ []\n', r.stderr);
});
