// File names as messages show them. A name is printed as is when it is plain, and JSON-quoted
// otherwise (spaces, quotes, backslashes, control or line-separator characters), so that a name
// can never split the one-line error or be mistaken for the text around it.

const ODD = /[\s"'\\\x00-\x1f\x7f-\x9f\u2028\u2029]/;

export function quoteName(name: string): string {
  if (name !== '' && !ODD.test(name)) return name;
  return escapeLine(JSON.stringify(name));
}

/**
 * Any text made safe for one line: characters that terminals or line-splitters (Python's
 * str.splitlines among them) treat as line breaks become \uXXXX escapes.
 */
export function escapeLine(text: string): string {
  return text.replace(/[\x00-\x1f\x7f-\x9f\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
