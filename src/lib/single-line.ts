// Text that stays on one line wherever it goes (an email header, a title): no line breaks and no
// other control characters — C0 (CR, LF and tab among them), DEL, C1 (NEL among them) and the Unicode
// line and paragraph separators.

// eslint-disable-next-line no-control-regex -- matching control characters is the point
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const CONTROL_RUNS = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]+/g;

/** What the rule says, for problem documents. */
export const SINGLE_LINE_RULE = "must not contain line breaks or other control characters";

/** Whether `v` holds no line break and no other control character. */
export const isSingleLine = (v: string): boolean => !CONTROL.test(v);

/** `v` on one line: each run of control characters (line breaks among them) becomes one space. */
export const oneLine = (v: string): string => v.replace(CONTROL_RUNS, " ");
