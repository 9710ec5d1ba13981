// A browser, as far as sign-in needs one: a cookie jar per host, redirects followed, HTML asked
// for. Edge hosts (no port in the URL) are reached at the harness's public HTTPS listener by
// name; other URLs at their own address. It trusts the CAs it is given.
import http from 'node:http';
import https from 'node:https';

export interface Page {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  /** The URL of this answer (after the redirects followed). */
  url: string;
  /** Every URL requested, in order. */
  visited: string[];
}

export interface BrowserOptions {
  /** The harness's public HTTPS port: where edge hosts are. */
  edgePort: number;
  /** CAs trusted (the service CA, the identity provider's). */
  cas: string[];
}

export class Browser {
  /** Cookies by host, then name. Paths and expiry times are not kept: a test's session is short. */
  readonly jar = new Map<string, Map<string, string>>();

  constructor(private readonly options: BrowserOptions) {}

  cookie(host: string, name: string): string | undefined {
    return this.jar.get(host)?.get(name);
  }

  setCookie(host: string, name: string, value: string): void {
    if (!this.jar.has(host)) this.jar.set(host, new Map());
    this.jar.get(host)!.set(name, value);
  }

  /** GET `url`, following redirects unless `follow` is false (or once `stopAt` matches the next URL). */
  async get(url: string, options: { follow?: boolean; stopAt?: RegExp; headers?: Record<string, string>; method?: string } = {}): Promise<Page> {
    const visited: string[] = [];
    let current = url;
    for (let hop = 0; hop < 20; hop++) {
      visited.push(current);
      const answer = await this.request(current, options.method ?? 'GET', options.headers ?? {});
      const location = answer.headers.location;
      const redirect = [301, 302, 303, 307, 308].includes(answer.status) && location !== undefined;
      if (!redirect || options.follow === false) return { ...answer, url: current, visited };
      const next = new URL(location, current).href;
      if (options.stopAt?.test(next)) return { ...answer, url: current, visited };
      current = next;
    }
    throw new Error(`more than 20 redirects from ${url}`);
  }

  private request(url: string, method: string, headers: Record<string, string>): Promise<Omit<Page, 'url' | 'visited'>> {
    const target = new URL(url);
    const edge = target.port === '';
    const cookies = [...(this.jar.get(target.hostname) ?? [])].map(([n, v]) => `${n}=${v}`).join('; ');
    return new Promise((resolve, reject) => {
      const req = (target.protocol === 'http:' ? http : https).request(
        {
          host: edge ? '127.0.0.1' : target.hostname,
          port: edge ? this.options.edgePort : Number(target.port),
          servername: edge ? target.hostname : undefined,
          ca: this.options.cas,
          method,
          path: `${target.pathname}${target.search}`,
          agent: false,
          headers: {
            host: target.host,
            accept: 'text/html,application/xhtml+xml,*/*;q=0.8',
            'user-agent': 'edgeplane-test-browser',
            ...(cookies && { cookie: cookies }),
            ...headers,
          },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            this.keep(target.hostname, res.headers['set-cookie'] ?? []);
            resolve({ status: res.statusCode!, headers: res.headers, text: Buffer.concat(chunks).toString() });
          });
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end();
    });
  }

  private keep(host: string, setCookies: string[]): void {
    for (const line of setCookies) {
      const [pair, ...attributes] = line.split(';');
      const eq = pair!.indexOf('=');
      const name = pair!.slice(0, eq).trim();
      const value = pair!.slice(eq + 1).trim();
      const gone = attributes.some((a) => /^\s*max-age=0\s*$/i.test(a)) || /expires=thu, 01 jan 1970/i.test(line);
      if (gone) this.jar.get(host)?.delete(name);
      else this.setCookie(host, name, value);
    }
  }
}
