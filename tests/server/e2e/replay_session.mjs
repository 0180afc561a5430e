// Replays a recorded session (tests/server/fixtures/agent_session.json's
// format: request bodies in order, "$reply": N standing for the server's
// reply to request N) through the real SDKs (@anthropic-ai/sdk for
// /v1/messages, openai for /v1/chat/completions), greedy, 96 tokens per
// reply, and writes each reply's text, usage and time. scripts/spec_replay
// drives it.
// Usage: node replay_session.mjs PORT FIXTURE OUT.json [extra-body-json]
import fs from 'node:fs';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
const [port, fixture, out, extraArg] = process.argv.slice(2);
const extra = extraArg ? JSON.parse(extraArg) : {};
const base = `http://127.0.0.1:${port}`;
const anthropic = new Anthropic({ baseURL: base, apiKey: 'x' });
const openai = new OpenAI({ baseURL: base + '/v1', apiKey: 'x' });
const session = JSON.parse(fs.readFileSync(fixture, 'utf8'));
const replies = [];
const results = [];
for (const req of session.requests) {
  const body = JSON.parse(JSON.stringify(req.body));
  const anth = req.path === '/v1/messages';
  for (const msg of body.messages) {
    if (!('$reply' in msg)) continue;
    const r = replies[msg['$reply']];
    delete msg['$reply'];
    if (anth) {
      const blocks = r.content.filter(b => b.type === 'text' || b.type === 'thinking');
      msg.content = [...blocks, ...(Array.isArray(msg.content) ? msg.content : [])];
    } else {
      const m = r.choices[0].message;
      if (typeof m.content === 'string') msg.content = m.content; else if (!msg.tool_calls) msg.content = '';
    }
  }
  Object.assign(body, { stream: false, temperature: 0, max_tokens: 96 }, extra);
  const t0 = Date.now();
  const r = anth ? await anthropic.messages.create(body) : await openai.chat.completions.create(body);
  const ms = Date.now() - t0;
  replies.push(r);
  const text = anth ? r.content.map(b => b.text ?? b.thinking ?? JSON.stringify(b.input ?? '')).join('') : (r.choices[0].message.content ?? '');
  results.push({ name: req.name, ms, text, usage: r.usage });
}
fs.writeFileSync(out, JSON.stringify(results, null, 1));
console.log(results.map(x => `${x.name}: ${x.ms} ms`).join('\n'));
