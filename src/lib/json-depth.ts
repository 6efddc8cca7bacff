// How deeply a JSON text nests (arrays and objects), read without parsing it: a bound checked before
// JSON.parse and whatever walks the result recursively (the federation's JSON-LD processing) see a
// body a hostile peer nested thousands deep. Brackets inside strings do not count.

/** Whether `text` nests at most `max` levels. */
export function jsonDepthWithin(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92)
        i++; // a backslash: the next character is escaped
      else if (c === 34) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 91 || c === 123) {
      if (++depth > max) return false;
    } else if (c === 93 || c === 125) depth--;
  }
  return true;
}
