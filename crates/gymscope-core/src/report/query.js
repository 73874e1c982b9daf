// The query language of docs/query.md for the report's filter box. The grammar and its messages
// are the core's (crates/gymscope-core/src/query/lex.rs and parse.rs) re-expressed; evaluation
// answers from the report's own columns what the app answers from its loaded columns
// (crates/gymscope-core/src/inspect/run_query.rs), and names what only the rollouts file can
// answer. tests/browser/report_query.rs checks both against the core on the same expressions.
const GymQuery = (() => {
  // Rust's char classes (`char::is_whitespace`, `is_alphabetic`, `is_alphanumeric`), so the
  // tokens and their columns (in characters) are the core's.
  const WS = /[\t-\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]/;
  const ALPHA = /\p{Alphabetic}/u;
  const ALNUM = /[\p{Alphabetic}\p{N}]/u;
  const DIGIT = /[0-9]/;
  const NUMBER_CHAR = /[0-9A-Za-z.]/;
  const NUMBER = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/; // Rust's f64 grammar, finite forms
  const KEYWORDS = { and: 'and', or: 'or', not: 'not', true: 'true', false: 'false', null: 'null' };

  class QueryError extends Error {
    constructor(column, message) {
      super('column ' + column + ': ' + message);
      this.column = column;
    }
  }

  // Rust's `Display` of an f64: the shortest round-trip digits, never an exponent.
  function rustFloat(n) {
    if (Object.is(n, -0)) return '-0';
    const s = String(n);
    const m = s.match(/^(-?)(\d+)(?:\.(\d+))?e([+-]\d+)$/);
    if (!m) return s;
    const [, sign, int, frac = '', exp] = m;
    const digits = int + frac, point = int.length + Number(exp);
    if (point <= 0) return sign + '0.' + '0'.repeat(-point) + digits;
    if (point >= digits.length) return sign + digits + '0'.repeat(point - digits.length);
    return sign + digits.slice(0, point) + '.' + digits.slice(point);
  }
  // Rust's `Debug` of a string (quotes, backslashes and control characters escaped).
  function rustDebug(s) {
    const esc = { '\0': '\\0', '\t': '\\t', '\r': '\\r', '\n': '\\n', '\\': '\\\\', '"': '\\"' };
    let out = '"';
    for (const c of s) {
      if (esc[c]) out += esc[c];
      else if (/\p{Cc}/u.test(c)) out += '\\u{' + c.codePointAt(0).toString(16) + '}';
      else out += c;
    }
    return out + '"';
  }
  function describe(t) {
    switch (t.t) {
      case 'name': return '`' + t.text + '`';
      case 'str': return 'the string ' + rustDebug(t.v);
      case 'num': return 'the number ' + rustFloat(t.v);
      case 'regex': return 'the regex /' + t.source + '/';
      case 'op': return '`' + t.op + '`';
      default: return '`' + t.t + '`';
    }
  }

  function tokens(text) {
    const cs = Array.from(text);
    const out = [];
    let i = 0;
    while (i < cs.length) {
      const c = cs[i], column = i + 1, two = cs[i + 1];
      if (WS.test(c)) { i++; continue; }
      const fail = (m) => { throw new QueryError(column, m); };
      if (c === '(' || c === ')' || c === '~') { out.push({ t: c, column }); i++; continue; }
      if ('=!<>'.includes(c) && two === '=') { out.push({ t: 'op', op: c + '=', column }); i += 2; continue; }
      if (c === '<' || c === '>') { out.push({ t: 'op', op: c, column }); i++; continue; }
      if (c === '=') fail('`=` alone: write `==` to compare');
      if (c === '!') fail('`!` alone: write `!=` or `not`');
      if (c === '&' || c === '|') fail('`' + c + '` is not an operator: write `and` or `or`');
      if (c === '"' || c === "'") {
        let s = '', j = i + 1, closed = false;
        while (j < cs.length) {
          if (cs[j] === c) { closed = true; j++; break; }
          if (cs[j] === '\\') {
            const e = cs[j + 1];
            if (e === undefined) fail('a string ends in `\\`');
            const map = { n: '\n', t: '\t', r: '\r', '\\': '\\', '"': '"', "'": "'" };
            if (!(e in map)) fail('unknown escape `\\' + e + '` in a string');
            s += map[e]; j += 2;
          } else { s += cs[j]; j++; }
        }
        if (!closed) fail('a string without its closing quote');
        out.push({ t: 'str', v: s, column }); i = j; continue;
      }
      if (c === '/') {
        let source = '', j = i + 1, done = false;
        while (j < cs.length) {
          if (cs[j] === '/') {
            let flags = ''; j++;
            while (j < cs.length && /[A-Za-z]/.test(cs[j])) flags += cs[j++];
            const bad = Array.from(flags).find((f) => f !== 'i');
            if (bad !== undefined) fail('unknown regex flag `' + bad + '` (the flag is `i`)');
            out.push({ t: 'regex', source, flags, column }); done = true; break;
          }
          if (cs[j] === '\\' && cs[j + 1] === '/') { source += '/'; j += 2; }
          else if (cs[j] === '\\') { source += '\\' + (cs[j + 1] === undefined ? '' : cs[j + 1]); j += 2; }
          else { source += cs[j]; j++; }
        }
        if (!done) fail('a regex without its closing `/`');
        i = j; continue;
      }
      if (c === '`') {
        const len = cs.slice(i + 1).indexOf('`');
        if (len < 0) fail('a backticked name without its closing `');
        if (len === 0) fail('an empty backticked name');
        out.push({ t: 'name', text: cs.slice(i + 1, i + 1 + len).join(''), quoted: true, column });
        i += len + 2; continue;
      }
      const numeric = (d) => d !== undefined && (DIGIT.test(d) || d === '.');
      if (DIGIT.test(c) || (c === '-' && numeric(two)) || (c === '.' && two !== undefined && DIGIT.test(two))) {
        let end = i + 1;
        while (end < cs.length && (NUMBER_CHAR.test(cs[end]) || ((cs[end] === '-' || cs[end] === '+') && /[eE]/.test(cs[end - 1])))) end++;
        const t = cs.slice(i, end).join('');
        const n = Number(t);
        if (!NUMBER.test(t) || !isFinite(n)) fail('`' + t + '` is not a number');
        out.push({ t: 'num', v: n, column }); i = end; continue;
      }
      if (ALPHA.test(c) || c === '_') {
        let end = i + 1;
        while (end < cs.length && (ALNUM.test(cs[end]) || cs[end] === '_' || cs[end] === '.')) end++;
        const t = cs.slice(i, end).join('');
        if (Object.prototype.hasOwnProperty.call(KEYWORDS, t)) out.push({ t, column });
        else {
          if (t.endsWith('.') || t.includes('..')) fail('`' + t + '`: a dot must join two names');
          out.push({ t: 'name', text: t, quoted: false, column });
        }
        i = end; continue;
      }
      fail('unexpected `' + c + '`');
    }
    return out;
  }

  const SCOPES = ['output', 'reasoning', 'args', 'tool_output', 'prompt', 'text'];
  const SIMPLE = ['task', 'rollout', 'agent', 'reward', 'tool_calls', 'tool', 'verdict', 'task.mean_reward', 'task.pass_rate', 'task.group'];
  // Field::parse: what a name refers to; `flags` are the health flags' names.
  function field(name, quoted, flags) {
    if (quoted) return { k: 'path', path: [name], name };
    if (SIMPLE.includes(name)) return { k: name, name };
    if (SCOPES.includes(name)) return { k: 'scope', name };
    if (name.startsWith('health.')) {
      const flag = name.slice(7);
      if (!flags.includes(flag)) throw '`' + name + '`: health flags are ' + flags.join(', ');
      return { k: 'health', name };
    }
    if (name.startsWith('task.')) throw '`' + name + '`: task aggregates are task.mean_reward, task.pass_rate, task.group';
    const parts = name.split('.');
    return parts[0] === 'usage' ? { k: 'usage', path: parts.slice(1), name } : { k: 'path', path: parts, name };
  }

  // parse.rs: precedence, tightest first: comparisons and `~`, then `not`, `and`, `or`.
  function parse(text, flags) {
    const toks = tokens(text);
    const end = Array.from(text).length + 1;
    let at = 0;
    const peek = () => toks[at];
    const here = () => (toks[at] ? toks[at].column : end);
    const fail = (m) => { throw new QueryError(here(), m); };
    if (!toks.length) throw new QueryError(1, 'the expression is empty');
    function or() {
      let e = and();
      while (peek() && peek().t === 'or') { at++; e = { op: 'or', a: e, b: and() }; }
      return e;
    }
    function and() {
      let e = not();
      while (peek() && peek().t === 'and') { at++; e = { op: 'and', a: e, b: not() }; }
      return e;
    }
    function not() {
      if (peek() && peek().t === 'not') { at++; return { op: 'not', a: not() }; }
      return primary();
    }
    function primary() {
      const tok = toks[at++];
      if (!tok) { at--; fail('expected a field or `(` after ' + describe(toks[toks.length - 1])); }
      if (tok.t === '(') {
        const e = or();
        if (toks[at] && toks[at].t === ')') { at++; return e; }
        fail('expected `)` to close the `(` at column ' + tok.column);
      }
      if (tok.t !== 'name') { at--; fail('expected a field or `(`, found ' + describe(tok)); }
      let f;
      try { f = field(tok.text, tok.quoted, flags); } catch (m) { throw new QueryError(tok.column, m); }
      const next = peek();
      if (next && next.t === 'op') {
        at++;
        if (f.k === 'scope') throw new QueryError(tok.column, '`' + tok.text + '` is text: match it with `~ "…"` or `~ /…/`');
        const v = peek();
        const lit = !v ? null : v.t === 'num' ? { kind: 'num', v: v.v } : v.t === 'str' ? { kind: 'str', v: v.v }
          : v.t === 'true' || v.t === 'false' ? { kind: 'bool', v: v.t === 'true' } : v.t === 'null' ? { kind: 'null' } : null;
        if (!lit) fail('expected a value after `' + next.op + '`');
        at++;
        return { op: 'cmp', f, cmp: next.op, lit };
      }
      if (next && next.t === '~') {
        at++;
        const p = toks[at++];
        if (p && p.t === 'str') return { op: 'match', f, pattern: { sub: p.v } };
        if (p && p.t === 'regex') {
          try {
            return { op: 'match', f, pattern: { re: new RegExp(p.source, p.flags.includes('i') ? 'iu' : 'u') } };
          } catch (e) {
            throw new QueryError(p.column, 'the regex does not compile: ' + e.message);
          }
        }
        at--;
        fail('expected a string or /regex/ after `~`');
      }
      if (f.k === 'scope') fail('expected `~` after `' + tok.text + '` (it is text: `' + tok.text + ' ~ "…"`)');
      return { op: 'truthy', f };
    }
    const e = or();
    const rest = peek();
    if (rest && rest.t === ')') throw new QueryError(rest.column, 'a `)` without its `(`');
    if (rest) throw new QueryError(rest.column, 'expected `and`, `or` or the end, found ' + describe(rest));
    return e;
  }

  // eval.rs `compare`: two-valued; a missing or null value makes a comparison false, `!=` too;
  // a boolean is never a number; booleans only compare for equality.
  function cmpText(a, b) {
    const x = Array.from(a), y = Array.from(b);
    for (let k = 0; k < Math.min(x.length, y.length); k++) {
      const d = x[k].codePointAt(0) - y[k].codePointAt(0);
      if (d) return Math.sign(d);
    }
    return Math.sign(x.length - y.length);
  }
  function compare(v, op, lit) {
    const absent = v === null || v === undefined;
    if (lit.kind === 'null') return op === '==' ? absent : op === '!=' ? !absent : false;
    if (absent) return false;
    let o = null;
    if (typeof v === 'number' && lit.kind === 'num') o = v < lit.v ? -1 : v > lit.v ? 1 : 0;
    else if (typeof v === 'string' && lit.kind === 'str') o = cmpText(v, lit.v);
    else if (typeof v === 'boolean' && lit.kind === 'bool' && (op === '==' || op === '!=')) o = Number(v) - Number(lit.v);
    if (o === null) return op === '!=';
    return { '==': o === 0, '!=': o !== 0, '<': o < 0, '<=': o <= 0, '>': o > 0, '>=': o >= 0 }[op];
  }

  const ELSEWHERE = ': the rollouts file answers it (the gymscope app with the run’s files, or `gymscope query`)';
  // Each predicate as a function of the point, from `cols` (built by the report's script); a
  // predicate the columns cannot answer throws a message naming it, as the app's
  // `run_query::answerable` sends it to the file.
  function compile(e, cols) {
    switch (e.op) {
      case 'or': { const a = compile(e.a, cols), b = compile(e.b, cols); return (i) => a(i) || b(i); }
      case 'and': { const a = compile(e.a, cols), b = compile(e.b, cols); return (i) => a(i) && b(i); }
      case 'not': { const a = compile(e.a, cols); return (i) => !a(i); }
      default: break;
    }
    const c = cols.column(e.f);
    if (!c) {
      if (e.f.k === 'scope') throw '`' + e.f.name + ' ~ …` reads the rollouts’ text, which this report does not hold' + ELSEWHERE;
      if (e.f.k === 'path' || e.f.k === 'usage') throw '`' + e.f.name + '` is not a column of this report (rollouts: ' + cols.pointNames().join(', ') + '; tasks: ' + cols.taskNames().join(', ') + ')' + ELSEWHERE;
      throw '`' + e.f.name + '` is read from the rollouts, which this report does not hold' + ELSEWHERE;
    }
    if (e.op === 'match') {
      if (c.kind === 'number') throw '`' + e.f.name + ' ~ …` matches text this report does not hold' + ELSEWHERE;
      const p = e.pattern;
      return p.re ? (i) => { const v = c.get(i); return typeof v === 'string' && p.re.test(v); }
        : (i) => { const v = c.get(i); return typeof v === 'string' && v.includes(p.sub); };
    }
    // A column of numbers cannot tell a boolean, a string or null from a missing value.
    const lit = e.op === 'cmp' ? e.lit : { kind: 'bool', v: true };
    if (c.kind === 'number' && lit.kind !== 'num') {
      throw '`' + e.f.name + '` is held here as numbers only, so a comparison with ' + (e.op === 'truthy' ? 'true' : lit.kind === 'str' ? 'a string' : lit.kind === 'bool' ? 'true or false' : 'null') + ' cannot be answered' + ELSEWHERE;
    }
    const op = e.op === 'cmp' ? e.cmp : '==';
    return (i) => compare(c.get(i), op, lit);
  }

  return { parse, compile, QueryError };
})();
