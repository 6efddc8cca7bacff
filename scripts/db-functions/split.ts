// SQL text split into its statements at the semicolons outside comments, quoted strings and
// dollar-quoted bodies. Comments between statements are dropped; those inside a body are kept.

export function splitStatements(sql: string): string[] {
  const out: string[] = [];
  let start = 0;
  let i = 0;
  const push = (end: number) => {
    const s = stripLeadingComments(sql.slice(start, end)).trim();
    if (s) out.push(s);
  };
  while (i < sql.length) {
    const ch = sql[i]!;
    if (ch === "-" && sql[i + 1] === "-") {
      const nl = sql.indexOf("\n", i);
      i = nl < 0 ? sql.length : nl + 1;
    } else if (ch === "/" && sql[i + 1] === "*") {
      const end = sql.indexOf("*/", i + 2);
      if (end < 0) throw new Error("unterminated /* comment");
      i = end + 2;
    } else if (ch === "'" || ch === '"') {
      let j = i + 1;
      for (;;) {
        j = sql.indexOf(ch, j);
        if (j < 0) throw new Error(`unterminated ${ch} quote`);
        if (sql[j + 1] === ch) j += 2;
        else break;
      }
      i = j + 1;
    } else if (ch === "$") {
      const tag = /^\$[A-Za-z_]*\$/.exec(sql.slice(i))?.[0];
      if (tag) {
        const end = sql.indexOf(tag, i + tag.length);
        if (end < 0) throw new Error(`unterminated ${tag} body`);
        i = end + tag.length;
      } else i++;
    } else if (ch === ";") {
      push(i);
      start = ++i;
    } else i++;
  }
  push(sql.length);
  return out;
}

function stripLeadingComments(s: string): string {
  for (;;) {
    const t = s.trimStart();
    if (t.startsWith("--")) {
      const nl = t.indexOf("\n");
      s = nl < 0 ? "" : t.slice(nl + 1);
    } else if (t.startsWith("/*")) {
      s = t.slice(t.indexOf("*/") + 2);
    } else return t;
  }
}
