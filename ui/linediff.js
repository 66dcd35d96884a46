// ui/linediff.js: a line diff of two texts (Myers' O(ND) algorithm, after
// stripping the common head and tail), grouped into hunks with context.

// [[op, oldLineNo, newLineNo, text], ...] with op ' ', '-' or '+'; null
// when the texts differ in more than maxD lines (too different to show).
export function diffLines(a, b, maxD = 2000) {
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head &&
         a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;
  const A = a.slice(head, a.length - tail);
  const B = b.slice(head, b.length - tail);
  const mid = myers(A, B, maxD);
  if (mid === null) return null;
  const out = [];
  for (let i = 0; i < head; i++) out.push([' ', i + 1, i + 1, a[i]]);
  let i = head; let j = head;
  for (const op of mid) {
    if (op === ' ') { out.push([' ', i + 1, j + 1, a[i]]); i++; j++; }
    else if (op === '-') { out.push(['-', i + 1, null, a[i]]); i++; }
    else { out.push(['+', null, j + 1, b[j]]); j++; }
  }
  for (let k = 0; k < tail; k++, i++, j++) out.push([' ', i + 1, j + 1, a[i]]);
  return out;
}

// The edit script turning A into B: a list of ' ', '-', '+'.  trace[d]
// keeps v[-d-1 .. d+1] as it was before round d (O(D^2) memory in all).
function myers(A, B, maxD) {
  const n = A.length; const m = B.length; const max = n + m;
  if (max === 0) return [];
  const off = max + 1;
  const v = new Int32Array(2 * max + 3);
  const trace = [];
  for (let d = 0; d <= Math.min(max, maxD); d++) {
    trace.push(v.slice(off - d - 1, off + d + 2));
    for (let k = -d; k <= d; k += 2) {
      let x = (k === -d || (k !== d && v[off + k - 1] < v[off + k + 1])) ?
        v[off + k + 1] : v[off + k - 1] + 1;
      let y = x - k;
      while (x < n && y < m && A[x] === B[y]) { x++; y++; }
      v[off + k] = x;
      if (x >= n && y >= m) return backtrack(trace, n, m, d);
    }
  }
  return null;
}

function backtrack(trace, n, m, dEnd) {
  const ops = [];
  let x = n; let y = m;
  for (let d = dEnd; d > 0; d--) {
    const t = trace[d];
    const at = (k) => t[k + d + 1];
    const k = x - y;
    const prevK = (k === -d || (k !== d && at(k - 1) < at(k + 1))) ?
      k + 1 : k - 1;
    const prevX = at(prevK);
    const prevY = prevX - prevK;
    while (x > prevX && y > prevY) { ops.push(' '); x--; y--; }
    ops.push(x === prevX ? '+' : '-');
    x = prevX; y = prevY;
  }
  while (x > 0 && y > 0) { ops.push(' '); x--; y--; }
  return ops.reverse();
}

// Rows grouped into hunks: changed lines with `context` lines around them;
// the unchanged runs between hunks become {skip: count}.
export function hunks(rows, context = 3) {
  const keep = new Uint8Array(rows.length);
  rows.forEach((r, i) => {
    if (r[0] === ' ') return;
    for (let k = Math.max(0, i - context);
      k <= Math.min(rows.length - 1, i + context); k++) keep[k] = 1;
  });
  const out = [];
  let skip = 0;
  rows.forEach((r, i) => {
    if (keep[i]) {
      if (skip) out.push({skip});
      skip = 0;
      out.push(r);
    } else {
      skip++;
    }
  });
  if (skip) out.push({skip});
  return out;
}
