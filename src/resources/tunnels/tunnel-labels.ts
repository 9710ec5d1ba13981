// Which labeled tunnels a tunnel-group backend routes to: those that carry every label of the
// backend with the same value (the tunnel may have more). Shared by tunnels (their `backends`)
// and tunnel-group backends (their `tunnels`).

export function parseLabels(stored: string): Record<string, string> {
  return JSON.parse(stored) as Record<string, string>;
}

/** Whether a tunnel with `tunnelLabels` matches a backend with `backendLabels`. A backend with no labels matches none. */
export function labelsMatch(backendLabels: Readonly<Record<string, string>>, tunnelLabels: Readonly<Record<string, string>>): boolean {
  const entries = Object.entries(backendLabels);
  return entries.length > 0 && entries.every(([k, v]) => Object.hasOwn(tunnelLabels, k) && tunnelLabels[k] === v);
}
