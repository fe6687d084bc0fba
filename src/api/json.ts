// The library's results are what the commands' --json prints: keys are snake_case everywhere.

/** An object's keys in snake_case (camelCase → camel_case), one level deep: for records whose own keys are camelCase (the anneal config). */
export function snakeKeys<V>(o: Record<string, V>): Record<string, V> {
  return Object.fromEntries(Object.entries(o).map(([k, v]) => [k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`), v]));
}
