#!/usr/bin/env node
// Times the real @vscode/prompt-tsx render call on JSONL cases (the ptsx oracle's case format).
//
//   CTXTOP_PTSX_ORACLE=/tmp/ptsx-oracle node bench/ptsx/time_render.mjs [--out results.jsonl] < cases.jsonl
//
// The oracle (a path, with node_modules installed) turns each JSON tree into prompt-tsx elements
// and renders it with its instrumentation (tracer, id hooks) to produce the result line written
// to --out. The timed figure is a second, plain render of the same elements: a bare
// `new PromptRenderer(endpoint, Root, props, tokenizer).renderRaw()`, measured with
// performance.now(), so neither JSON parsing nor the oracle's bookkeeping is counted. The plain
// render's messages/tokenCount are checked against the instrumented one (`plainMismatches`).
// Prints one JSON summary line: cases, renderMs (sum of plain renders, wall clock), renderCpuMs
// (their CPU time, user + system, all of node's threads), oracleMs (instrumented renderTree
// calls), plainMismatches.

import { createWriteStream } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';
import { isDeepStrictEqual } from 'node:util';

const args = process.argv.slice(2);
const outIndex = args.indexOf('--out');
const outPath = outIndex >= 0 ? args[outIndex + 1] : undefined;
const oracleDir = process.env.CTXTOP_PTSX_ORACLE;
if (!oracleDir) {
	process.stderr.write('set CTXTOP_PTSX_ORACLE to a ptsx oracle copy (with node_modules)\n');
	process.exit(2);
}

const oracle = await import(pathToFileURL(join(resolve(oracleDir), 'oracle.mjs')).href);
// Resolved from the oracle's own node_modules: the same module instance the oracle renders with.
const { PromptRenderer } = createRequire(join(resolve(oracleDir), 'package.json'))('@vscode/prompt-tsx');

// Remember what the oracle's renderer was built with, so the plain render gets the same elements.
let captured;
const renderRaw = PromptRenderer.prototype.renderRaw;
PromptRenderer.prototype.renderRaw = function (...rest) {
	if (this.constructor !== PromptRenderer) {
		captured = [this._endpoint, this._ctor, this._props, this._tokenizer];
	}
	return renderRaw.apply(this, rest);
};

async function timePlainRender() {
	const renderer = new PromptRenderer(...captured);
	const cpuStart = process.cpuUsage();
	const start = performance.now();
	let result;
	let error;
	try {
		result = await renderer.renderRaw();
	} catch (e) {
		error = e;
	}
	const ms = performance.now() - start;
	const cpu = process.cpuUsage(cpuStart);
	renderCpuMs += (cpu.user + cpu.system) / 1000;
	if (error) return { ms, error: error?.constructor?.name ?? 'Error' };
	return { ms, tokenCount: result.tokenCount, messages: result.messages.map(oracle.messageToJSON) };
}

const out = outPath ? createWriteStream(outPath) : undefined;
let cases = 0;
let renderMs = 0;
let renderCpuMs = 0;
let oracleMs = 0;
let plainMismatches = 0;
for await (const line of createInterface({ input: process.stdin, crlfDelay: Infinity })) {
	if (!line.trim()) continue;
	const c = JSON.parse(line);
	captured = undefined;
	const start = performance.now();
	let result;
	try {
		result = await oracle.renderTree(c.tree, { budget: c.budget, tokenizer: c.tokenizer });
	} catch (e) {
		// a malformed case, reported like `render.mjs --jsonl` does; nothing to time
		out?.write(JSON.stringify({ usageError: String(e?.message ?? e) }) + '\n');
		continue;
	}
	oracleMs += performance.now() - start;
	// Serialised before the plain render: Expandable calls of that render would be appended.
	const serialised = JSON.stringify({ id: c.id, ...result });
	out?.write(serialised + '\n');
	const plain = await timePlainRender();
	renderMs += plain.ms;
	const same = result.error
		? plain.error !== undefined
		: plain.tokenCount === result.tokenCount && isDeepStrictEqual(plain.messages, result.messages);
	if (!same) plainMismatches++;
	cases++;
}
if (out) await new Promise((done) => out.end(done));
process.stdout.write(JSON.stringify({ cases, renderMs, renderCpuMs, oracleMs, plainMismatches }) + '\n');
