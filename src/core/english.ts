// English for messages built from names: "an API key", "a user", "an oauth module".

/** Letters whose name starts with a vowel sound, read out in an abbreviation: "an SSH key", "a TLS edge". */
const VOWEL_SOUNDING_LETTERS = new Set('AEFHILMNORSX');

/** `phrase` with "a" or "an" before it, by how its first word is said. */
export function withArticle(phrase: string): string {
  const word = phrase.split(/[\s_-]/)[0] ?? '';
  const first = word[0] ?? '';
  let an: boolean;
  // An abbreviation (API, IP, HTTPS, TLS) is read letter by letter.
  if (word.length > 1 && word === word.toUpperCase() && /^[A-Z]/.test(word)) an = VOWEL_SOUNDING_LETTERS.has(first);
  // "user", "unique" and "one" start with a consonant sound; "hour" is not a name we have.
  else if (/^(u[nks]?[aeiou]|use|uni|one)/i.test(word)) an = false;
  else an = /^[aeiou]/i.test(first);
  return `${an ? 'an' : 'a'} ${phrase}`;
}
