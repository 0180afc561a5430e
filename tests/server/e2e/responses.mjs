// The npm `openai` client's Responses API (responses.create and
// responses.stream) against a running lineage server, as Codex-like clients
// use it: instructions, developer and user messages, function tools,
// store: false, and the next turn sent whole (output items, a function
// result, a new user message).
// Usage: node responses.mjs BASE_URL MODE   (MODE: fake = scripted backend
// that answers with a tool call when tools are offered; real = a model,
// shapes only). Prints "cached2=N" (cached tokens of the second turn), then "ok".
import OpenAI from 'openai';
import assert from 'node:assert/strict';

const [base, mode] = process.argv.slice(2);
const openai = new OpenAI({ baseURL: `${base}/v1`, apiKey: 'k', maxRetries: 0 });
const fake = mode === 'fake';

const tools = [{ type: 'function', name: 'read_file', description: 'Read a file', strict: false,
  parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] } }];
const instructions = 'You are a coding agent. Keep answers short.';
const input = [{ role: 'developer', content: 'Sandbox: read-only.' }, { role: 'user', content: 'Read a.txt' }];
const params = { model: 'm', instructions, input, tools, max_output_tokens: 8, temperature: 0, store: false };

// Non-streaming.
const r1 = await openai.responses.create(params);
assert.equal(r1.object, 'response');
assert.ok(r1.id.startsWith('resp_'));
assert.equal(typeof r1.usage.input_tokens_details.cached_tokens, 'number');
console.log(`cached1=${r1.usage.input_tokens_details.cached_tokens}`);
assert.ok(r1.output.length > 0);
if (fake) {
  assert.equal(r1.status, 'completed');
  assert.equal(r1.output_text, 'I will read it.');
  const call = r1.output.find((o) => o.type === 'function_call');
  assert.equal(call.name, 'read_file');
  assert.deepEqual(JSON.parse(call.arguments), { path: 'a.txt' });
}

// The stream helper: typed events, deltas with snapshots, the final response.
const s = openai.responses.stream(params);
let text = '';
let args = '';
const seen = new Set();
s.on('event', (e) => seen.add(e.type));
s.on('response.output_text.delta', (e) => { text += e.delta; });
s.on('response.function_call_arguments.delta', (e) => { args += e.delta; });
const final = await s.finalResponse();
assert.ok(seen.has('response.created'));
assert.ok(seen.has('response.completed') || seen.has('response.incomplete'));
assert.ok(final.output.length > 0);
if (fake) {
  assert.equal(text, 'I will read it.');
  assert.deepEqual(JSON.parse(args), { path: 'a.txt' });
  assert.equal(final.output.find((o) => o.type === 'function_call').name, 'read_file');
}

// create({stream: true}): the raw event iterator.
let plain = '';
let last = '';
for await (const e of await openai.responses.create({ model: 'm', input: 'Say hello', stream: true, max_output_tokens: 8 })) {
  if (e.type === 'response.output_text.delta') plain += e.delta;
  last = e.type;
}
assert.ok(last === 'response.completed' || last === 'response.incomplete', last);
if (fake) assert.equal(plain, 'Hello, world');

// The next turn, sent whole: turn 1's output items, a function result, a new message.
const next = [...input, ...r1.output];
const call = r1.output.find((o) => o.type === 'function_call');
if (call) next.push({ type: 'function_call_output', call_id: call.call_id, output: 'hello from a.txt' });
next.push({ role: 'user', content: 'Now summarise it.' });
const r2 = await openai.responses.create({ ...params, input: next });
assert.equal(r2.object, 'response');
console.log(`cached2=${r2.usage.input_tokens_details.cached_tokens}`);

// Nothing is stored: a follow-up by id is a typed 400.
await assert.rejects(openai.responses.create({ model: 'm', input: 'x', previous_response_id: r1.id }),
  (e) => e.status === 400 && /keeps no responses/.test(e.message));
console.log('ok');
