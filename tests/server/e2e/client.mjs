// The official OpenAI and Anthropic client libraries against a running
// lineage server: streaming, non-streaming, tool calls, usage.
// Usage: node client.mjs BASE_URL MODE   (MODE: fake = scripted backend that
// answers with a tool call when tools are offered; real = a model, shapes only)
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import assert from 'node:assert/strict';

const [base, mode] = process.argv.slice(2);
const openai = new OpenAI({ baseURL: `${base}/v1`, apiKey: 'k', maxRetries: 0 });
const anthropic = new Anthropic({ baseURL: base, apiKey: 'k', maxRetries: 0 });
const fake = mode === 'fake';

const tools = [{ type: 'function', function: { name: 'read_file', description: 'Read a file',
  parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] } } }];
const messages = [{ role: 'system', content: 'You are terse.' }, { role: 'user', content: 'Read a.txt' }];

// OpenAI, non-streaming, with tools.
const c1 = await openai.chat.completions.create({ model: 'm', messages, tools, max_tokens: 8, temperature: 0 });
assert.equal(c1.object, 'chat.completion');
assert.equal(typeof c1.usage.prompt_tokens_details.cached_tokens, 'number');
if (fake) {
  assert.equal(c1.choices[0].finish_reason, 'tool_calls');
  assert.equal(c1.choices[0].message.tool_calls[0].function.name, 'read_file');
  assert.deepEqual(JSON.parse(c1.choices[0].message.tool_calls[0].function.arguments), { path: 'a.txt' });
}

// OpenAI, streaming with usage, through the SDK's stream helper.
const stream = openai.beta.chat.completions.stream({ model: 'm', messages, tools, max_tokens: 8, temperature: 0,
  stream: true, stream_options: { include_usage: true } });
const final = await stream.finalChatCompletion();
assert.ok(final.usage, 'usage chunk');
if (fake) {
  assert.equal(final.choices[0].message.tool_calls[0].function.name, 'read_file');
  assert.equal(final.choices[0].finish_reason, 'tool_calls');
}

// OpenAI, plain streaming text without tools.
let text = '';
for await (const chunk of await openai.chat.completions.create({ model: 'm', messages, max_tokens: 8, stream: true })) {
  text += chunk.choices[0]?.delta?.content ?? '';
}
if (fake) assert.equal(text, 'Hello, world');

// OpenAI completions and models.
const comp = await openai.completions.create({ model: 'm', prompt: 'Once', max_tokens: 4 });
assert.equal(comp.object, 'text_completion');
const models = await openai.models.list();
assert.ok(models.data.length === 1);

// Anthropic, non-streaming with tools.
const atools = [{ name: 'read_file', description: 'Read a file',
  input_schema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] } }];
const amsgs = [{ role: 'user', content: 'Read a.txt' }];
const m1 = await anthropic.messages.create({ model: 'm', max_tokens: 8, system: 'You are terse.', messages: amsgs, tools: atools });
assert.equal(m1.type, 'message');
assert.equal(typeof m1.usage.cache_read_input_tokens, 'number');
if (fake) {
  assert.equal(m1.stop_reason, 'tool_use');
  const use = m1.content.find((b) => b.type === 'tool_use');
  assert.deepEqual(use.input, { path: 'a.txt' });
}

// Anthropic, streaming through the SDK's accumulator; then a tool_result turn.
const s2 = anthropic.messages.stream({ model: 'm', max_tokens: 8, system: [{ type: 'text', text: 'You are terse.' }],
  messages: amsgs, tools: atools });
const m2 = await s2.finalMessage();
assert.equal(m2.role, 'assistant');
if (fake) {
  const use = m2.content.find((b) => b.type === 'tool_use');
  assert.deepEqual(use.input, { path: 'a.txt' });
  const m3 = await anthropic.messages.create({ model: 'm', max_tokens: 8, messages: [...amsgs,
    { role: 'assistant', content: m2.content },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: 'hello' }] }] });
  assert.equal(m3.content[0].text, 'Hello, world');
}

// Errors come back as the SDKs' typed errors.
await assert.rejects(openai.chat.completions.create({ model: 'm', messages: [{ role: 'wizard', content: 'x' }] }),
  (e) => e.status === 400);
await assert.rejects(anthropic.messages.create({ model: 'm', max_tokens: 4, messages: [{ role: 'wizard', content: 'x' }] }),
  (e) => e.status === 400 && e.error?.error?.type === 'invalid_request_error');
console.log('ok');
