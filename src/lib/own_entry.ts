/**
 * The entry of `table` named `key`, or undefined when `key` is not one of the table's own keys. Use it
 * wherever a key from outside (a config file, a flag, a URL, a DNS name) looks up a fixed table: a
 * plain `table[key]` finds Object.prototype's members for names like `constructor`, `toString` or
 * `__proto__`, and treats them as known.
 */
export function ownEntry<T>(table: Readonly<Record<string, T>>, key: string): T | undefined {
  return Object.hasOwn(table, key) ? table[key] : undefined;
}
