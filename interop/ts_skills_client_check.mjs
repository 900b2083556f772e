// The official TypeScript skills client (SkillsClient from @modelcontextprotocol/client 2.4.0's
// ./ext/skills, pinned in interop/package.json) reads rondo's skills: conformance/server.py over
// HTTP, once pinned to 2026-07-28 and once in the client's default legacy mode (a 2025-11-25
// `initialize` session). For each era it lists the catalog (every entry valid to the package,
// cache fields on 2026-07-28), gets one skill, reads and verifies SKILL.md (digest, size,
// frontmatter against the entry) and every other listed file, reads the skill directory and a
// subdirectory (resources/directory/read), and sees an unknown skill refused with -32602.
//
//   node interop/ts_skills_client_check.mjs
import { spawn } from 'node:child_process';
import assert from 'node:assert/strict';
import path from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { SkillsClient, DIRECTORY_MIME_TYPE } from '@modelcontextprotocol/client/ext/skills';
import { PYTHON, ROOT, freePort, waitForHttp } from './support.mjs';

const MODERN = '2026-07-28';
const INFO = { name: 'rondo-skills-interop', version: '1.0.0' };
const PDF = 'skill://pdf-processing/SKILL.md';

async function exercise(url, era) {
  const options = era === MODERN ? { versionNegotiation: { mode: { pin: MODERN } } } : {};
  const client = new Client(INFO, options);
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  try {
    const skills = new SkillsClient(client);
    assert.equal(skills.supported, true, 'the package sees the skills extension');
    assert.equal(skills.directoryRead, true);
    const listing = await skills.list();
    assert.deepEqual(listing.invalid, []);
    const uris = listing.skills.map((s) => s.uri).sort();
    assert.deepEqual(uris, [PDF, 'skill://release-notes/SKILL.md']);
    if (era === MODERN) {
      assert.equal(typeof listing.ttlMs, 'number');
      assert.equal(listing.cacheScope, 'public');
    }
    console.log(`ok ${era}: skills/list gives ${uris.length} valid entries`);

    const { skill } = await skills.get(PDF);
    assert.equal(skill.frontmatter.name, 'pdf-processing');
    assert.equal(skill.frontmatter.metadata.version, '1.0');
    const manifest = await skills.read(skill);
    assert.equal(manifest.verified, true);
    assert.deepEqual(manifest.frontmatter, skill.frontmatter);
    assert.match(manifest.body, /references\/FORMS\.md/);
    console.log(`ok ${era}: SKILL.md read and verified (digest, size, frontmatter)`);

    const others = skill.resources.filter((r) => r.uri !== PDF);
    assert.ok(others.length >= 2, 'the fixture skill has files in subdirectories');
    for (const file of others) {
      const read = await skills.read(skill, file.uri);
      assert.equal(read.verified, true);
      assert.equal(read.bytes.length, file.size);
    }
    console.log(`ok ${era}: ${others.length} more files read and verified`);

    const top = await skills.readDirectory('skill://pdf-processing');
    const dirs = top.resources.filter((r) => r.mimeType === DIRECTORY_MIME_TYPE).map((r) => r.uri);
    assert.deepEqual(dirs.sort(), ['skill://pdf-processing/references', 'skill://pdf-processing/scripts']);
    const inner = await skills.readDirectory('skill://pdf-processing/references');
    assert.deepEqual(inner.resources.map((r) => r.uri), ['skill://pdf-processing/references/FORMS.md']);
    console.log(`ok ${era}: resources/directory/read lists children and subdirectories`);

    await assert.rejects(skills.get('skill://no-such-skill/SKILL.md'), (error) => error.code === -32602);
    console.log(`ok ${era}: an unknown skill is -32602`);
  } finally {
    await client.close();
  }
}

async function main() {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}/mcp`;
  const server = spawn(PYTHON, [path.join(ROOT, 'conformance', 'server.py'), '--port', String(port)],
    { stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  server.stderr.on('data', (chunk) => { log += chunk; });
  try {
    await waitForHttp(url, server);
    await exercise(url, MODERN);
    await exercise(url, '2025-11-25');
  } catch (error) {
    console.error(log.slice(-3000));
    throw error;
  } finally {
    server.kill('SIGTERM');
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
