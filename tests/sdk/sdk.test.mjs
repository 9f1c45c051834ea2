// The published @microsoft/mxc-sdk 1.0.1, unchanged, against our libmxc_ffi.so
// (MXC_FFI_DIR): its public v1 API end to end, as root, real namespaces.
// Run by tests/sdk/run.sh (installs Node 24 and the SDK from the lockfile).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import * as mxc from '@microsoft/mxc-sdk/v1';

assert.ok(process.env.MXC_FFI_DIR, 'MXC_FFI_DIR must name the directory of our libmxc_ffi.so');
assert.ok(fs.existsSync(path.join(process.env.MXC_FFI_DIR, 'libmxc_ffi.so')));

const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'mxc-sdk-'));
fs.chmodSync(scratch, 0o755);

function collect(stream) {
  return new Promise((resolve, reject) => {
    let s = '';
    stream.setEncoding('utf8');
    stream.on('data', (d) => { s += d; });
    stream.on('end', () => resolve(s));
    stream.on('error', reject);
  });
}

// Host pids whose command line is exactly `cmd` (argv joined by spaces).
function hostPids(cmd) {
  const pids = [];
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const argv = fs.readFileSync(`/proc/${d}/cmdline`, 'utf8').split('\0').filter((a) => a !== '');
      if (argv.join(' ') === cmd) pids.push(Number(d));
    } catch { /* gone meanwhile */ }
  }
  return pids;
}

async function waitFor(pred, ms = 5000) {
  const end = Date.now() + ms;
  while (!pred() && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
  return pred();
}

async function rejectsWith(promise, code) {
  await assert.rejects(promise, (e) => {
    assert.ok(e instanceof mxc.MxcError, `not an MxcError: ${e}`);
    assert.equal(e.code, code, e.message);
    assert.ok(e.message.length > 0);
    return true;
  });
}

test('the SDK loads our library', () => {
  const backends = mxc.getAvailableBackends();
  assert.ok(backends.some((b) => b.backend === 'bubblewrap'), JSON.stringify(backends));
});

test('getPlatformSupport: our lxc-exec answers --available-backends', () => {
  const bin = fs.mkdtempSync(path.join(scratch, 'bin-'));
  fs.mkdirSync(path.join(bin, 'x64'));
  // the executor beside the library (a build tree), or where an installed package put it (MXC_EXEC_BIN)
  const exe = process.env.MXC_EXEC_BIN ?? path.join(process.env.MXC_FFI_DIR, 'mxc-exec');
  fs.symlinkSync(exe, path.join(bin, 'x64', 'lxc-exec'));
  process.env.MXC_BIN_DIR = bin;
  const support = mxc.getPlatformSupport();
  assert.equal(support.isSupported, true, JSON.stringify(support));
  assert.equal(support.bubblewrapNetwork.proxyEnforcement, 'unsupported');
  assert.ok(support.bubblewrapNetwork.warnings.some((w) => w.startsWith('mxc:')), JSON.stringify(support));
});

test('run: stdout, stderr and the exit code', async () => {
  const r = await mxc.run({ command: 'echo hello; echo oops >&2; exit 7' });
  assert.equal(r.stdout, 'hello\n');
  assert.equal(r.stderr, 'oops\n');
  assert.equal(r.exitCode, 7);
  assert.equal(r.timedOut, false);
});

test('run: exit codes as the shell gives them', async () => {
  assert.equal((await mxc.run({ command: 'exit 300' })).exitCode, 44);
  assert.equal((await mxc.run({ command: 'kill -9 $$' })).exitCode, 137);
  assert.equal((await mxc.run({ command: 'kill -TERM $$' })).exitCode, 143);
  assert.equal((await mxc.run({ command: 'true', containment: { type: 'bubblewrap' } })).exitCode, 0);
});

test('run: a read-only grant is readable and not writable', async () => {
  const dir = fs.mkdtempSync(path.join(scratch, 'ro-'));
  fs.writeFileSync(path.join(dir, 'data'), 'granted\n');
  const r = await mxc.run({
    command: `cat ${dir}/data; if echo x > ${dir}/new; then echo WROTE; fi`,
    filesystem: { readonlyPaths: [dir] },
  });
  assert.equal(r.stdout, 'granted\n', r.stderr);
  assert.equal(fs.existsSync(path.join(dir, 'new')), false);
});

test('run: a read-write grant is writable, and the host sees the write', async () => {
  const dir = fs.mkdtempSync(path.join(scratch, 'rw-'));
  fs.chmodSync(dir, 0o777);
  const r = await mxc.run({ command: `echo written > ${dir}/out`, filesystem: { readwritePaths: [dir] } });
  assert.equal(r.exitCode, 0, r.stderr);
  assert.equal(fs.readFileSync(path.join(dir, 'out'), 'utf8'), 'written\n');
});

test('run: a denied path under a grant is hidden', async () => {
  const dir = fs.mkdtempSync(path.join(scratch, 'deny-'));
  fs.mkdirSync(path.join(dir, 'secret'));
  fs.writeFileSync(path.join(dir, 'secret', 'key'), 'SECRET\n');
  fs.writeFileSync(path.join(dir, 'open'), 'open\n');
  const r = await mxc.run({
    command: `cat ${dir}/open; cat ${dir}/secret/key; true`,
    filesystem: { readonlyPaths: [dir], deniedPaths: [path.join(dir, 'secret')] },
  });
  assert.equal(r.stdout, 'open\n');
  assert.ok(!r.stdout.includes('SECRET'));
});

test('run: an ungranted host path is not there', async () => {
  const dir = fs.mkdtempSync(path.join(scratch, 'none-'));
  fs.writeFileSync(path.join(dir, 'f'), 'HOSTFILE\n');
  const r = await mxc.run({ command: `cat ${dir}/f; true` });
  assert.ok(!r.stdout.includes('HOSTFILE'));
});

test('run: a blocked network reaches no host listener', async () => {
  const server = net.createServer((c) => { c.end('REACHED\n'); });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = server.address().port;
  try {
    const probe = `if (exec 3<>/dev/tcp/127.0.0.1/${port}) 2>/dev/null; then echo CONNECTED; else echo refused; fi`;
    const blocked = await mxc.run({
      command: `bash -c '${probe}'`,
      network: { egress: { default: 'deny' }, ingress: { default: 'deny', hostLoopback: 'deny' } },
    });
    assert.equal(blocked.stdout, 'refused\n', blocked.stderr);
    const byDefault = await mxc.run({ command: `bash -c '${probe}'` });
    assert.equal(byDefault.stdout, 'refused\n', byDefault.stderr);
  } finally {
    server.close();
  }
});

test('run: environment, working directory', async () => {
  const r = await mxc.run({ command: 'echo "$FOO"; pwd', environment: { FOO: 'bar' }, workingDirectory: '/tmp' });
  assert.equal(r.stdout, 'bar\n/tmp\n', r.stderr);
});

// Issue 28: SDK 1.0.1 sends workingDirectory and filesystem paths as given; a relative one means the
// caller's working directory (src/lib/relpath.h), where upstream's bubblewrap took it from the root.
test('run: a relative working directory and grants are the caller\'s own directory\'s', async () => {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(scratch, 'rel-')));
  fs.mkdirSync(path.join(dir, 'work'));
  fs.chmodSync(path.join(dir, 'work'), 0o777);
  fs.writeFileSync(path.join(dir, 'work', 'f'), 'here\n');
  const before = process.cwd();
  process.chdir(dir);
  try {
    const r = await mxc.run({ command: 'pwd; cat f; echo made > g', workingDirectory: 'work',
                              filesystem: { readwritePaths: ['work'] } });
    assert.equal(r.stdout, `${dir}/work\nhere\n`, r.stderr);
    assert.equal(r.exitCode, 0, r.stderr);
    assert.equal(fs.readFileSync(path.join(dir, 'work', 'g'), 'utf8'), 'made\n');
    const dot = await mxc.run({ command: 'pwd', workingDirectory: './work/', filesystem: { readonlyPaths: ['.'] } });
    assert.equal(dot.stdout, `${dir}/work\n`, dot.stderr);
    // what stays ambiguous is refused, never guessed
    await rejectsWith(mxc.run({ command: 'pwd', workingDirectory: '../x' }), 'backend_error');
    // a session: grants given relative at provision, an exec's relative working directory
    const network = { egress: { default: 'allow' }, ingress: { default: 'allow', hostLoopback: 'allow' } };
    const prov = await mxc.provisionContainer({ containment: 'isolation_session', network,
                                                filesystem: { readonlyPaths: ['work'] } });
    try {
      await mxc.startContainer(prov.containerId);
      const e = await mxc.runInContainer(prov.containerId, { command: 'pwd; cat f', workingDirectory: 'work' });
      assert.equal(e.stdout, `${dir}/work\nhere\n`, e.stderr);
    } finally {
      await mxc.deprovisionContainer(prov.containerId);
    }
  } finally {
    process.chdir(before);
  }
});

// Issue 28: what the SDK's own builders produce for a backend this host lacks is judged as upstream's
// parser judges it: a malformed section is malformed on every host, a good one is a missing backend.
test('backend sections from the SDK\'s builders: malformed everywhere, or a backend this host lacks', async () => {
  await rejectsWith(mxc.run({ command: 'true', containment: { type: 'processcontainer',
                                                               config: { capabilities: ['a,b'] } } }),
                    'malformed_request');
  await rejectsWith(mxc.run({ command: 'true', containment: { type: 'processcontainer', config: {} } }),
                    'unsupported_containment');
  await rejectsWith(mxc.run({ command: 'true', containment: { type: 'seatbelt', config: {} } }),
                    'unsupported_containment');
});

test('run: the timeout is enforced natively', async () => {
  const r = await mxc.run({ command: 'echo started; sleep 30', timeoutMs: 300 });
  assert.equal(r.timedOut, true);
  assert.equal(r.exitCode, -1);
  assert.equal(r.stdout, 'started\n');
});

test('spawn: stdin and stdout stream while the workload runs', async () => {
  const p = await mxc.spawn({ command: 'while read line; do echo "got $line"; done; echo bye' });
  const out = p.standardOutput;
  out.setEncoding('utf8');
  const lines = [];
  let buf = '';
  let waiter = null;
  out.on('data', (d) => {
    buf += d;
    let i;
    while ((i = buf.indexOf('\n')) >= 0) {
      lines.push(buf.slice(0, i));
      buf = buf.slice(i + 1);
      if (waiter) waiter();
    }
  });
  const nextLine = () => new Promise((resolve) => {
    const n = lines.length;
    waiter = () => { if (lines.length > n) { waiter = null; resolve(lines[n]); } };
  });
  // a reply arrives before the next input is written: the stream is live
  let reply = nextLine();
  p.standardInput.write('one\n');
  assert.equal(await reply, 'got one');
  reply = nextLine();
  p.standardInput.write('two\n');
  assert.equal(await reply, 'got two');
  p.standardInput.end();
  const result = await p.wait();
  assert.deepEqual(result, { exitCode: 0, timedOut: false });
  assert.deepEqual(lines, ['got one', 'got two', 'bye']);
  p.dispose();
});

test('spawn: stderr is a stream of its own', async () => {
  const p = await mxc.spawn({ command: 'echo out; echo err >&2; exit 5' });
  const [out, err, result] = await Promise.all([collect(p.standardOutput), collect(p.standardError), p.wait()]);
  assert.equal(out, 'out\n');
  assert.equal(err, 'err\n');
  assert.equal(result.exitCode, 5);
  p.dispose();
});

test('spawn: timeout and kill', async () => {
  const t = await mxc.spawn({ command: 'sleep 30', timeoutMs: 300 });
  assert.deepEqual(await t.wait(), { exitCode: -1, timedOut: true });
  t.dispose();
  const k = await mxc.spawn({ command: 'sleep 30 & sleep 30' });
  k.kill();
  assert.deepEqual(await k.wait(), { exitCode: -1, timedOut: false });
  k.dispose();
});

test('spawnWithPty: the workload has a terminal of the requested size', async () => {
  const p = await mxc.spawnWithPty(
    { command: 'test -t 0 && test -t 1 && test -t 2 && echo isatty; stty size; read x; echo "typed $x"; exit 3' },
    { size: { rows: 30, columns: 100 } });
  const output = collect(p.output);
  p.input.write('abc\n');
  const result = await p.wait();
  const text = (await output).replace(/\r/g, '');
  assert.match(text, /^isatty$/m);
  assert.match(text, /^30 100$/m); // (the terminal echoes the input wherever it lands)
  assert.match(text, /typed abc/);
  assert.equal(result.exitCode, 3);
  p.dispose();
});

test('spawnWithPty: output written just before the exit is all delivered', async () => {
  const p = await mxc.spawnWithPty({ command: "head -c 50000 /dev/zero | tr '\\0' x; echo; echo END" });
  const output = collect(p.output);
  assert.equal((await p.wait()).exitCode, 0);
  const text = (await output).replace(/\r/g, '');
  assert.equal(text, 'x'.repeat(50000) + '\nEND\n');
  p.dispose();
});

test('spawnWithPty: resize reaches the terminal', async () => {
  const p = await mxc.spawnWithPty({ command: 'read x; stty size' }, { size: { rows: 24, columns: 80 } });
  const output = collect(p.output);
  p.resize({ rows: 50, columns: 132 });
  p.input.write('\n');
  await p.wait();
  assert.match((await output).replace(/\r/g, ''), /50 132/);
  p.dispose();
});

test('typed errors: each refusal carries its wire code', async () => {
  // (the network models, served to Node too, are net.test.mjs's, inside a namespace of its own)
  // a backend this host lacks
  await rejectsWith(mxc.run({ command: 'true', containment: { type: 'processcontainer' } }), 'unsupported_containment');
  await rejectsWith(mxc.run({ command: 'true', containment: { type: 'lxc' } }), 'unsupported_containment');
  // our own checks: a relative path that climbs (a relative one is the caller's directory's), a ui grant
  await rejectsWith(mxc.run({ command: 'true', filesystem: { readonlyPaths: ['../relative/dir'] } }), 'backend_error');
  // the SDK's own validation
  await rejectsWith(mxc.run({ command: 'true', network: { allowOutbound: true } }), 'malformed_request');
  // a bad CIDR reaches the native parser: malformed_request
  await rejectsWith(mxc.run({ command: 'true', network: { egress: { default: 'deny', allow: [{ to: [{ cidr: '300.0.0.0/8' }] }] } } }),
    'malformed_request');
  const err = await mxc.run({ command: 'true', containment: { type: 'processcontainer' } }).catch((e) => e);
  assert.equal(err.details.ffiStatus, 2);
});

test('isolation_session: provision, start, execs, stop, restart, deprovision, then stale_id', async () => {
  const network = { egress: { default: 'allow' }, ingress: { default: 'allow', hostLoopback: 'allow' } };
  await mxc.validateProvision({ containment: 'isolation_session', network });
  const prov = await mxc.provisionContainer({ containment: 'isolation_session', network, appId: 'PFN:Mxc.Sdk.Test' });
  const id = prov.containerId;
  assert.match(id, /^iso:/);
  assert.equal(typeof prov.metadata.agentUserName, 'string');
  const ws = prov.metadata.ephemeralWorkspacePath;
  assert.ok(ws.startsWith('/'));
  try {
    // exec before start: not_started
    await rejectsWith(mxc.runInContainer(id, { command: 'true' }), 'not_started');
    assert.deepEqual(await mxc.startContainer(id), { warnings: [] });
    await rejectsWith(mxc.startContainer(id), 'already_started');
    // several execs share the session: its processes and its workspace
    const a = await mxc.runInContainer(id, { command: `echo first > ${ws}/note; id -u; echo $$` });
    assert.equal(a.exitCode, 0, a.stderr);
    const b = await mxc.runInContainer(id, { command: `cat ${ws}/note; exit 4` });
    assert.equal(b.stdout, 'first\n');
    assert.equal(b.exitCode, 4);
    const c = await mxc.runInContainer(id, { command: 'sleep 30', timeoutMs: 300 });
    assert.equal(c.timedOut, true);
    // a background process started by one exec is seen by the next
    await mxc.runInContainer(id, { command: 'sleep 300 >/dev/null 2>&1 &' });
    const ps = await mxc.runInContainer(id, { command: 'ls /proc | grep -c "^[0-9]"' });
    assert.ok(Number(ps.stdout) >= 2, ps.stdout);
    // a marked background process: alive on the host after its exec returned
    const marker = `sleep 3000.${process.pid % 100000}`;
    await mxc.runInContainer(id, { command: `${marker} >/dev/null 2>&1 &` });
    assert.ok(await waitFor(() => hostPids(marker).length === 1), 'the background sleep is not running');
    // streaming exec
    const p = await mxc.spawnInContainer(id, { command: 'read x; echo "in session $x"' });
    const out = collect(p.standardOutput);
    p.standardInput.end('yes\n');
    assert.deepEqual(await p.wait(), { exitCode: 0, timedOut: false });
    assert.equal(await out, 'in session yes\n');
    p.dispose();
    // a terminal exec
    const t = await mxc.spawnInContainerWithPty(id, { command: 'test -t 0 && echo tty; stty size' }, { size: { rows: 33, columns: 99 } });
    const tout = collect(t.output);
    await t.wait();
    assert.match((await tout).replace(/\r/g, ''), /tty\n33 99/);
    t.dispose();
    await mxc.validateProcess(id, { command: 'true' });
    // stop ends the session and keeps the identity
    assert.deepEqual(await mxc.stopContainer(id), { warnings: [] });
    await rejectsWith(mxc.stopContainer(id), 'already_stopped');
    await rejectsWith(mxc.runInContainer(id, { command: 'true' }), 'not_started');
    // restart: a new session over the same workspace, the old processes gone
    await mxc.startContainer(id);
    const d = await mxc.runInContainer(id, { command: `cat ${ws}/note; ls /proc | grep -c "^[0-9]"` });
    assert.equal(d.stdout.split('\n')[0], 'first');
    // the earlier exec's background process did not survive stop + start
    assert.ok(await waitFor(() => hostPids(marker).length === 0), `still running: ${hostPids(marker)}`);
  } finally {
    await mxc.deprovisionContainer(id);
  }
  await rejectsWith(mxc.startContainer(id), 'stale_id');
  await rejectsWith(mxc.deprovisionContainer(id), 'stale_id');
  await rejectsWith(mxc.runInContainer(id, { command: 'true' }), 'stale_id');
});

test('isolation_session one-shots: run and spawn leave no sandbox behind', async () => {
  const network = { egress: { default: 'allow' }, ingress: { default: 'allow', hostLoopback: 'allow' } };
  const before = fs.readdirSync(process.env.MXC_STATE_DIR).filter((n) => !n.startsWith('.'));
  const r = await mxc.run({ command: 'echo once', containment: { type: 'isolation_session' }, network });
  assert.equal(r.stdout, 'once\n');
  const p = await mxc.spawn({ command: 'read x; echo "got $x"; exit 4', containment: { type: 'isolation_session' }, network });
  const out = collect(p.standardOutput);
  p.standardInput.end('in\n');
  assert.deepEqual(await p.wait(), { exitCode: 4, timedOut: false });
  assert.equal(await out, 'got in\n');
  p.dispose();
  const after = fs.readdirSync(process.env.MXC_STATE_DIR).filter((n) => !n.startsWith('.'));
  assert.deepEqual(after, before);
});

test('isolation_session: ids the SDK and the native side refuse', async () => {
  await rejectsWith(mxc.startContainer('abc'), 'malformed_id');
  await rejectsWith(mxc.startContainer('zzz:abc'), 'malformed_id');
  await rejectsWith(mxc.startContainer('iso:%%%'), 'malformed_id');
});

test('telemetry: nothing is collected, nothing to consent to', async () => {
  const s = await mxc.getTelemetryConsentStatus();
  assert.ok(JSON.stringify(s).includes('not-applicable') || JSON.stringify(s).includes('notApplicable'), JSON.stringify(s));
});

test.after(() => { fs.rmSync(scratch, { recursive: true, force: true }); });
