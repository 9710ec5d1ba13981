// The bounds of one policy, whichever form it comes in. Checking CEL costs time in proportion to
// its length (up to a few microseconds a character), and a config value by value (a CIDR costs
// microseconds), so a policy's expressions and its configs' values are bounded all together as
// well as one by one: a policy module body of 1 MiB could otherwise hold 50,000 CIDRs.
export const LIMITS = {
  rulesPerPhase: 100,
  expressionsPerRule: 32,
  actionsPerRule: 32,
  expressionLength: 4096,
  expressionsLength: 32 * 1024,
  configValues: 10_000,
} as const;
