// The cache page in a real browser (Debian's chromium, driven by
// puppeteer-core): a scripted multi-turn session with a regenerate and a
// sub-agent, then what a person would see on /cache, then a new request
// appearing without a reload, a long prefill in flight, and a phone-width
// window. Saves screenshots.
// Usage: node cache_page.mjs BASE_URL API_KEY SCREENSHOT_PREFIX
import puppeteer from 'puppeteer-core';
import assert from 'node:assert/strict';

const [base, key, shots] = process.argv.slice(2);
const auth = { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' };

async function api(path, body) {
  const res = await fetch(base + path, body === undefined ? { headers: auth } : { method: 'POST', headers: auth, body: JSON.stringify(body) });
  if (res.status !== 200) assert.fail(`${path}: ${res.status} ${await res.text()}`);
  return res.json();
}
const tools = [
  { type: 'function', function: { name: 'read_file', description: 'Read a file of the repository',
    parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] } } },
  { type: 'function', function: { name: 'run_tests', description: 'Run the test suite',
    parameters: { type: 'object', properties: { filter: { type: 'string' } } } } },
];
const system = { role: 'system', content: 'You are a coding agent in a C++ repository. Read before you edit; run the tests after every change.' };
const chat = (messages, extra = {}) => api('/v1/chat/completions', { model: 'tiny', messages, tools, max_tokens: 6, temperature: 0, ...extra });
const cached = r => r.usage.prompt_tokens_details.cached_tokens;
const asNumber = s => Number(String(s).replace(/[^0-9]/g, ''));

// The session: two turns, a regenerate of the second, a sub-agent with its
// own system prompt and one tool, and a second session on the same system.
const a = [system, { role: 'user', content: 'The build fails in src/cache. Find out why.' }];
const r1 = await chat(a);
a.push({ role: 'assistant', content: r1.choices[0].message.content || '' }, { role: 'user', content: 'Fix it and rerun the tests.' });
await chat(a);
await chat(a);  // regenerate
await chat([{ role: 'system', content: 'You are a sub-agent. Report in one line.' }, { role: 'user', content: 'Survey src/text.' }],
  { tools: tools.slice(0, 1) });
const last = await chat([system, { role: 'user', content: 'Add a benchmark for the tokenizer.' }]);
assert.ok(cached(last) > 0, 'the second session restores the anchor');

const browser = await puppeteer.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
});
try {
  const page = await browser.newPage();
  await page.setViewport({ width: 1200, height: 1400 });
  // The browser answers the page's 401 with the key as a Basic password.
  await page.authenticate({ username: 'me', password: key });
  const response = await page.goto(`${base}/cache?interval_ms=100`, { waitUntil: 'load' });
  assert.equal(response.status(), 200);
  await page.waitForFunction(() => Number(document.body.dataset.updates || 0) >= 1, { timeout: 20000 });
  await page.evaluate(() => { window.__sameDocument = true; });

  // Each look at the page is one page.evaluate: the page re-renders every
  // interval, and element handles kept across calls could be replaced.
  // The lineage tree: every stored lineage, nested under its parent, with
  // its checkpoint kinds; the shared anchor says so.
  const data = await api('/v1/cache/lineages');
  const tree = await page.evaluate(() => [...document.querySelectorAll('li.lineage')].map(li => ({
    id: Number(li.dataset.id), anchor: li.dataset.anchor === 'true', kinds: li.dataset.kinds.split(',').filter(Boolean),
    tokens: Number(li.dataset.tokens), extendedBy: Number(li.dataset.extendedBy),
    nestedUnder: li.parentElement.closest('li.lineage') ? Number(li.parentElement.closest('li.lineage').dataset.id) : null,
    shared: li.querySelector(':scope > .node .tag.shared')?.textContent || '',
    visible: li.querySelector(':scope > .node').getBoundingClientRect().height > 0,
  })));
  assert.equal(tree.length, data.lineages.length, 'one node per lineage');
  assert.ok(tree.length >= 4, `lineages: ${tree.length}`);
  for (const l of data.lineages) {
    const n = tree.find(t => t.id === l.id);
    assert.ok(n && n.visible, `lineage ${l.id} is drawn`);
    assert.equal(n.tokens, l.tokens);
    assert.equal(n.nestedUnder, l.parent, `lineage ${l.id} hangs under its parent`);
    assert.deepEqual(n.kinds, l.checkpoints.map(c => c.kind));
  }
  const anchors = tree.filter(t => t.anchor);
  assert.ok(anchors.length >= 2, 'the shared system prompt and the sub-agent have anchors');
  const shared = anchors.find(t => t.extendedBy >= 2);
  assert.ok(shared, 'an anchor extended by both sessions');
  assert.match(shared.shared, /shared by \d+ lineages/);
  const kinds = new Set(tree.flatMap(t => t.kinds));
  assert.ok(kinds.has('history_end') && kinds.has('final'), `checkpoint kinds: ${[...kinds]}`);
  const axisMarks = await page.evaluate(() => [...document.querySelectorAll('svg.axis text')].map(t => t.textContent));
  assert.ok(axisMarks.includes('H'), 'history-end marks on the token axes');

  // The newest request row shows the restored length the API returned.
  const firstRow = async () => page.evaluate(() => {
    const tr = document.querySelector('#recent tbody tr');
    return { id: Number(tr.dataset.requestId), restored: tr.querySelector('td.restored').textContent };
  });
  const row = await firstRow();
  assert.equal(asNumber(row.restored), cached(last));

  // The RAM bar matches /v1/cache/stats.
  const stats = await api('/v1/cache/stats');
  const bar = await page.evaluate(() => {
    const b = document.getElementById('ram-bar');
    return { used: Number(b.dataset.used), budget: Number(b.dataset.budget) };
  });
  assert.equal(bar.used, stats.ram_bytes);
  assert.equal(bar.budget, stats.ram_budget_bytes);
  const ramText = await page.evaluate(() => document.getElementById('ram-text').textContent);
  assert.match(ramText, / of /);

  await page.screenshot({ path: `${shots}.png`, fullPage: true });

  // A new request appears without a reload.
  const next = await chat([system, { role: 'user', content: 'One more question.' }]);
  await page.waitForFunction(prev => {
    const tr = document.querySelector('#recent tbody tr');
    return tr && Number(tr.dataset.requestId) > prev;
  }, { timeout: 20000 }, row.id);
  const newest = await firstRow();
  assert.equal(asNumber(newest.restored), cached(next));
  assert.equal(await page.evaluate(() => window.__sameDocument === true), true, 'no reload');

  // A long prefill shows in flight with its progress.
  const words = Array.from({ length: 650 }, (_, i) => `word${i}`).join(' ');
  const long = chat([{ role: 'user', content: words }], { max_tokens: 1, tools: undefined });
  const live = await page.waitForFunction(() => {
    const tr = document.querySelector('#live tbody tr');
    return tr && tr.querySelector('progress') ? tr.textContent : null;
  }, { timeout: 30000, polling: 50 });
  const liveText = await live.jsonValue();
  const longReply = await long;
  assert.ok(liveText.includes('/ ' + longReply.usage.prompt_tokens.toLocaleString('en-US')), liveText);

  // A phone-width window: nothing wider than the screen but the tables'
  // own scrolling boxes.
  await page.setViewport({ width: 390, height: 844 });
  await new Promise(r => setTimeout(r, 600));
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(overflow <= 1, `page overflows a phone by ${overflow}px`);
  await page.screenshot({ path: `${shots}-phone.png`, fullPage: true });
  console.log(`ok lineages=${tree.length} anchors=${anchors.length} newest_request=${newest.id} live="${liveText.replace(/\s+/g, ' ').trim()}"`);
} finally {
  await browser.close();
}
