// How an address and port are written where people and URLs read them.

/** `host:port`, an IPv6 address in brackets (`[::1]:8443`). */
export function hostPort(host: string, port: number): string {
  return `${host.includes(':') ? `[${host}]` : host}:${port}`;
}
