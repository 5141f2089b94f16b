"""`node -e` / `node -p` / a here-document to `node` in the read-only shell grammar: a script that
only computes and prints reads; one that writes, runs a program, loads code the analysis cannot
read or reaches past its lists stays mutating, with the reason. The shapes are those agents run
(reading a package's version, a JSON file's field, a folder's listing, a hook's JSON on standard
input); the escapes are the ways out of a JavaScript allow-list."""

from __future__ import annotations

import pytest

from replaylab.safety.shell_grammar import grammar_verdict
from replaylab.safety.shell_node import script_change

READS = [
    """node -e "console.log(require('./package.json').version)\"""",
    """node -p "require('./node_modules/react/package.json').version\"""",
    "node -p \"process.versions.node + ' ' + process.platform\"",
    """node -e "const fs=require('fs'); console.log(fs.readdirSync('src').filter(f => f.endsWith('.ts')).length)\"""",
    """node -e "const p=require('./package.json'); for (const k in p.scripts) console.log(k, '=>', p.scripts[k])\"""",
    """node -e "const {readFileSync}=require('node:fs'); const j=JSON.parse(readFileSync('tsconfig.json','utf8')); console.log(JSON.stringify(j.compilerOptions, null, 2))\"""",
    """cat data.json | node -e "let s=''; process.stdin.on('data', c => s += c); process.stdin.on('end', () => { const j = JSON.parse(s); console.log(j.items.length) })\"""",
    """node -e "const path=require('path'); console.log(path.resolve('.'), require('os').homedir())\"""",
    """node -e "console.log(new Date(Date.now() - 864e5).toISOString(), Intl.DateTimeFormat().resolvedOptions().timeZone)\"""",
    """node -e "const c=require('crypto'); console.log(c.createHash('sha256').update('x').digest('hex'))\"""",
    """node -e "(async () => { const r = await fetch('https://registry.npmjs.org/react/latest'); console.log((await r.json()).version) })()\"""",
    "node - <<'EOF'\nconst fs = require('fs');\nconst b = fs.readFileSync('/tmp/frame.bmp');\nconsole.log(b.length, b.readUInt32LE(2));\nEOF",
    "node <<'EOF'\nconst deps = Object.entries(require('./package.json').dependencies || {});\nfor (const [name, v] of deps) console.log(`${name}@${v}`);\nEOF",
    """bun -e "console.log('bun', Bun.version)\"""",
    "node --check scripts/build.js",
    """node -e "const path = 'src/a.ts'; console.log(path.length, require('path').posix.join('a', path))\"""",
    """node -p "require('@types/node/package.json').version + ' ' + require('../config/app.json').name\"""",
    """node --no-warnings -e "console.log(Object.keys(require('./package.json')).join(','))\"""",
]
WRITES = [
    ("""node -e "require('fs').writeFileSync('out.txt', 'x')\"""", "`fs.writeFileSync`"),
    ("""node -e "const {execSync}=require('child_process'); execSync('rm -rf build')\"""", "loads `child_process`"),
    ("""node -e "require('./scripts/migrate.js')\"""", "loads `./scripts/migrate.js`"),
    ("""node -e "require('fs').readFileSync('a.txt', {flag: 'w'})\"""", "could open a file to write"),
    ("""node -e "fetch('https://api.example.com/orders', {method: 'POST', body: '{}'})\"""", "`fetch` with options"),
    ("""node -e "fetch('https://api.example.com/orders/7/cancel')\"""", "names `cancel`"),
    ("""node -e "import('./x.mjs').then(m => m.run())\"""", "`import`"),
    ("""node -e "require('fs').promises.rm('x')\"""", "`fs.promises`"),
    ("""node -e "console.log(require(process.argv[1]))" ./x.js""", "a name known only when it runs"),
    ("""node -e "1" --require ./preload.js""", "an option after the script"),
    ("node -r ./preload.js -e 1", "runs programs"),
    ("node scripts/deploy.js", "runs programs"),
    ('node -e "require(\\"fs\\").readFileSync(\\"$HOME/x\\")"', "runs programs"),  # the shell expands `$HOME`
]
#: ways out of a JavaScript allow-list: every one must be refused
ESCAPES = [
    "''['constructor']['constructor']('return process')()",
    "const k = 'constr' + 'uctor'; const F = (() => {})[k]; const g = F('return 1'); g()",
    "const k = 'constr' + 'uctor', c = 'ca' + 'll'; const F = (() => {})[k]; const fns = ['x'].map(F); fns.map((() => {})[c], fns[0])",
    "const k = 'constructor'; ['return 1'].map((() => {})[k]).forEach(setTimeout)",
    "const {constructor} = () => {}; constructor('x')",
    "const {call} = () => {}; [1].map(call, () => {})",
    "const t = o[k] || 0; t()",
    "const o = {}; o[k1][k2] = 1",
    "Object.assign(Object.getPrototypeOf({}), {flag: 'w'})",
    "Object.prototype.flag = 'w'",
    "const a = {}; a.__proto__.flag = 'w'",
    "process.getBuiltinModule('child_process')",
    "process.binding('fs')",
    "process.mainModule.require('child_process')",
    "module.constructor._load('child_process')",
    "const m = require; m('child_process')",
    "(0, require)('child_process')",
    "const x = require('fs'); const y = x; y.writeFileSync('a', 'b')",
    "const o = {f: require('fs')}; o.f.writeFileSync('x', 'y')",
    "const f = (m) => m.writeFileSync('x', 'y'); f(require('fs'))",
    "const f = require('fs'); const k = 'writeFileSync'; f[k]('x', 'y')",
    "const e = require('fs').existsSync; e('x')",
    "eval('1')",
    "new Function('return 1')()",
    "Reflect.get(process, 'binding')",
    "globalThis.process.exit()",
    "with (process) { binding('fs') }",
    "setTimeout('process.exit()')",
    "[1].forEach(queueMicrotask)",
    "Object.values(console)",
    "new Promise(o[k])",
    "JSON.parse('{}', o[k])",
    "console.log = 1",
    "x = require('fs')",
    "this.x = 1",
    "class A {}",
    "require('util').promisify(require('fs').writeFile)",
    "const process = {}; process.binding('fs')",
    "require('fs').readFileSync('x', 'w')",
    # what an adversarial review ran for real, each writing a file or starting a process
    "const fs = require('fs'); fs.readFileSync(...['t1', {flag: 'w'}])",
    "const {readFileSync} = require('fs'); readFileSync(...['t5', {flag: 'w'}])",
    "const fs = require('fs'); const o = {r: fs.readFileSync}; o.r('t2', {flag: 'w'})",
    "const {readFileSync} = require('fs'); const o = {r: readFileSync}; o.r('t4', {flag: 'w'})",
    "const o = {F: ''.\\u0063onstructor.\\u0063onstructor}; o.F('x')",
    "const {'constructor': c} = ''; const {'constructor': F} = c; ({g: F}).g('x')",
    "const {['constructor']: c} = ''; const {['constructor']: F} = c",
    "require('evil.json')",
    "require('pkg/lib/data.json')",
    # a second round: a name of node's global modules bound in a scope, the streams and what `on` returns
    "function f(child_process) {} child_process.execSync('touch X')",
    "try { x() } catch (fs) {} fs.writeFileSync('x', 'y')",
    "const s = process.stdin; s.destroy()",
    "process.on('exit', () => {}).report.writeReport('f')",
    "const p = process.once('exit', () => {}); p.kill(1)",
    "arguments[1]('child_process')",
    # a third round: console's own stream, a line a `#!` ends where node does, the loader's `path`
    "const s = console._stdout; s.connect(8791, '127.0.0.1')",
    "#!/x\u2028require('child_process').execSync('touch x')",
    "#!/x\rrequire('child_process').execSync('touch x')",
    "function f(path) {} path.resolve = () => './x.js'; require('./package.json')",
    "var path; path.resolve = () => './x.js'",
    "Object.assign(require('path').posix, {resolve: () => './x.js'})",
    "const {posix} = require('path'); Object.assign(posix, {resolve: () => './x.js'})",
]


@pytest.mark.parametrize("command", READS)
def test_a_script_that_only_computes_and_prints_reads(command: str) -> None:
    verdict = grammar_verdict(command)
    assert verdict.read_only, verdict
    assert "`node" in verdict.reason or "`bun" in verdict.reason


@pytest.mark.parametrize(("command", "why"), WRITES)
def test_a_script_that_may_change_something_stays_mutating_and_says_why(command: str, why: str) -> None:
    verdict = grammar_verdict(command)
    assert not verdict.read_only, verdict
    assert why in verdict.reason


@pytest.mark.parametrize("script", ESCAPES)
def test_no_way_out_of_the_lists_reads(script: str) -> None:
    assert script_change(script) is not None, script


def test_a_script_the_grammar_cannot_parse_is_refused_and_deep_nesting_raises_nothing() -> None:
    assert script_change("console.log(") == "a script the JavaScript grammar cannot read"
    assert script_change("[" * 5000 + "]" * 5000) is None  # data nested deep: read without recursion
    deep = "const " + "[" * 3000 + "a" + "]" * 3000 + " = [];"
    assert script_change(deep) in (None, "a script nested too deeply to read")
