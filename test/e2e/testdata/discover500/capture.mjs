// capture.mjs PKG [args...]: starts the npm MCP server PKG (installed under
// $NODE_MODULES, default ./node_modules) over stdio with dummy credentials and
// prints {package, version, args, serverInfo, instructions, tools} as JSON:
// its initialize answer and every page of its tools/list.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
const [pkg, ...args] = process.argv.slice(2);
const dir = path.join(process.env.NODE_MODULES || 'node_modules', pkg);
const pj = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8'));
let bin = pj.bin;
if (typeof bin === 'object') { bin = Object.values(bin)[0]; }
if (!bin) bin = pj.main;
const dummy = 'dummy-key-0000';
const env = { ...process.env };
for (const k of ['GITHUB_PERSONAL_ACCESS_TOKEN','BRAVE_API_KEY','SLACK_BOT_TOKEN','SLACK_TEAM_ID','GOOGLE_MAPS_API_KEY','FIRECRAWL_API_KEY','TAVILY_API_KEY','EXA_API_KEY','AMAP_MAPS_API_KEY','BAIDU_MAP_API_KEY','GITLAB_PERSONAL_ACCESS_TOKEN','AIRTABLE_API_KEY','TODOIST_API_KEY','TODOIST_API_TOKEN','TRELLO_API_KEY','TRELLO_TOKEN','TRELLO_BOARD_ID','LINEAR_API_KEY','LARA_ACCESS_KEY_ID','LARA_ACCESS_KEY_SECRET','DISCORD_TOKEN','RESEND_API_KEY','DATADOG_API_KEY','DATADOG_APP_KEY','ATLASSIAN_SITE_NAME','ATLASSIAN_USER_EMAIL','ATLASSIAN_API_TOKEN','OBSIDIAN_API_KEY','CIRCLECI_TOKEN','MAPBOX_ACCESS_TOKEN','NOTION_TOKEN','SENDER_EMAIL_ADDRESS','MYSQL_PASS']) env[k] = env[k] || dummy;
env.MYSQL_HOST='127.0.0.1'; env.MYSQL_USER='root'; env.MYSQL_DB='db'; env.MYSQL_PORT='3306';
env.MDB_MCP_CONNECTION_STRING='mongodb://127.0.0.1:1/db';
env.GITLAB_API_URL='http://127.0.0.1:1/api/v4';
env.OBSIDIAN_BASE_URL='http://127.0.0.1:1';
const cmd = bin.endsWith('.js') || bin.endsWith('.mjs') || bin.endsWith('.cjs') || !bin.includes('.') ? 'node' : 'node';
const child = spawn(cmd, [path.join(dir, bin), ...args], { env, stdio: ['pipe', 'pipe', 'pipe'] });
let buf = ''; const waiting = new Map(); let id = 0;
let stderr = '';
child.stderr.on('data', d => { stderr += d; });
child.stdout.on('data', d => {
  buf += d; let i;
  while ((i = buf.indexOf('\n')) >= 0) {
    const line = buf.slice(0, i).trim(); buf = buf.slice(i + 1);
    if (!line.startsWith('{')) continue;
    let m; try { m = JSON.parse(line); } catch { continue; }
    if (m.id !== undefined && waiting.has(m.id)) { waiting.get(m.id)(m); waiting.delete(m.id); }
    else if (m.id !== undefined && m.method) { child.stdin.write(JSON.stringify({jsonrpc:'2.0', id: m.id, result: {}}) + '\n'); }
  }
});
const rpc = (method, params) => new Promise((res, rej) => { const n = ++id; waiting.set(n, res); child.stdin.write(JSON.stringify({ jsonrpc: '2.0', id: n, method, params }) + '\n'); });
const timer = setTimeout(() => { console.error('timeout; stderr: ' + stderr.slice(-2000)); child.kill('SIGKILL'); process.exit(2); }, 25000);
child.on('exit', c => { if (!done) { console.error('exited ' + c + '; stderr: ' + stderr.slice(-2000)); process.exit(3); } });
let done = false;
const init = await rpc('initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'capture', version: '0' } });
if (init.error) { console.error(JSON.stringify(init.error)); process.exit(4); }
child.stdin.write(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) + '\n');
let tools = [], cursor;
do {
  const r = await rpc('tools/list', cursor ? { cursor } : {});
  if (r.error) { console.error(JSON.stringify(r.error)); process.exit(5); }
  tools = tools.concat(r.result.tools); cursor = r.result.nextCursor;
} while (cursor);
done = true; clearTimeout(timer);
process.stdout.write(JSON.stringify({ package: pkg, version: pj.version, args, serverInfo: init.result.serverInfo, instructions: init.result.instructions || '', tools }, null, 1));
child.kill('SIGKILL'); process.exit(0);
