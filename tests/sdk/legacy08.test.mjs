// Issue 14: the legacy wire dialect through the published SDK 0.8.0 — its `network.allowOutbound: true`
// (defaultPolicy allow, no allowLocalNetwork), spawned through our lxc-exec (MXC_BIN_DIR): model 1,
// the test internet reached, host loopback not.  SDK 1.0.1 refuses allowOutbound itself
// (UnsupportedV1NetworkFields), so 0.8.0 is the SDK that sends it.
//
// NETWORK SAFETY: as net.test.mjs — run.sh runs this inside a namespace it makes; WEB is a
// documentation-range address in a second one of run.sh's, one veth away; nothing leaves them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createConfigFromPolicy, spawnSandboxFromConfig } from 'mxc-sdk-0.8';
import { WEB, probe, serveAll } from './nettest.mjs';

assert.ok(process.env.MXC_BIN_DIR, 'MXC_BIN_DIR names our lxc-exec');
await serveAll([['127.0.0.1', 8082, 'LOOPBACK\n']]);

test('SDK 0.8 allowOutbound: true reaches the test internet, never host loopback', async () => {
  const config = createConfigFromPolicy({ version: '0.6.0-alpha', network: { allowOutbound: true }, timeoutMs: 60_000 });
  assert.equal(config.network.defaultPolicy, 'allow');
  assert.notEqual(config.network.allowLocalNetwork, true);
  config.process.commandLine = probe(`${WEB}:8080`, '10.0.2.2:8082', '127.0.0.1:8082');
  const child = spawnSandboxFromConfig(config, { usePty: false });
  let out = '', err = '';
  child.stdout.on('data', (d) => { out += d; });
  child.stderr.on('data', (d) => { err += d; });
  const code = await new Promise((resolve) => child.on('close', resolve));
  assert.equal(code, 0, err);
  assert.equal(out, `${WEB}:8080 WEB8080\n10.0.2.2:8082 FAIL\n127.0.0.1:8082 FAIL\n`, err);
});
