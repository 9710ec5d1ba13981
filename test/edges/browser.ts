// A browser, as far as sign-in needs one: a cookie jar per host, redirects followed, HTML asked
// for, HTML forms posted (an identity provider's auto-posting page submitted as a browser would run
// it). Edge hosts (no port in the URL) are reached at the harness's public HTTPS listener by name;
// other URLs (the API, an identity provider) at their own address. It trusts the CAs it is given.
import http from 'node:http';
import https from 'node:https';

export interface Page {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  /** The URL of this answer (after the redirects followed). */
  url: string;
  /** Every URL requested, in order (form posts included). */
  visited: string[];
}

/** A form as a page posts it (urlencoded): the SAML HTTP-POST binding's shape. */
export interface PostedForm {
  action: string;
  fields: Record<string, string>;
}

export interface BrowserOptions {
  /** The harness's public HTTPS port: where edge hosts are. */
  edgePort: number;
  /** CAs trusted (the service CA, the identity provider's). */
  cas: string[];
}

export interface NavigateOptions {
  /** False: answer the first response as it is, redirect or not. */
  follow?: boolean;
  /** Stop before requesting a URL this matches, answering the response that pointed there. */
  stopAt?: RegExp;
  /** Headers sent on the first request (not on the ones redirects lead to). */
  headers?: Record<string, string>;
}

const REDIRECTS = [301, 302, 303, 307, 308];
/** A page that submits its first form as soon as it loads (what an identity provider sends toward an ACS). */
const AUTO_POST = /onload="document\.forms\[0\]\.submit\(\)"/;
const MAX_HOPS = 20;

/** The first form of a page: its action and hidden fields (as the test identity providers write them). */
export function parseForm(html: string): PostedForm {
  const action = /<form[^>]*action="([^"]+)"/.exec(html)?.[1];
  if (action === undefined) throw new Error('the page has no form with an action');
  const fields: Record<string, string> = {};
  for (const m of html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) fields[m[1]!] = m[2]!;
  return { action, fields };
}

export class Browser {
  /** Cookies by host name (not port, as browsers keep them), then name. Paths and expiry times are not kept: a test's session is short. */
  readonly jar = new Map<string, Map<string, string>>();
  /** The last form posted (submitted, or posted by an auto-posting page). */
  lastForm: PostedForm | undefined;

  constructor(private readonly options: BrowserOptions) {}

  cookie(host: string, name: string): string | undefined {
    return this.jar.get(host)?.get(name);
  }

  cookieNames(host: string): string[] {
    return [...(this.jar.get(host)?.keys() ?? [])];
  }

  setCookie(host: string, name: string, value: string): void {
    if (!this.jar.has(host)) this.jar.set(host, new Map());
    this.jar.get(host)!.set(name, value);
  }

  /** GET `url`, following redirects and auto-posting pages (see NavigateOptions). */
  get(url: string, options: NavigateOptions = {}): Promise<Page> {
    return this.navigate(url, 'GET', undefined, options);
  }

  /** Posts a form as the browser would (urlencoded), and follows what comes back. */
  submit(form: PostedForm, options: NavigateOptions = {}): Promise<Page> {
    this.lastForm = form;
    return this.navigate(form.action, 'POST', new URLSearchParams(form.fields).toString(), options);
  }

  private async navigate(url: string, method: string, body: string | undefined, options: NavigateOptions): Promise<Page> {
    const visited: string[] = [];
    let current = { url, method, body, headers: options.headers ?? {} };
    for (let hop = 0; hop < MAX_HOPS; hop++) {
      visited.push(current.url);
      const answer = await this.request(current.url, current.method, current.headers, current.body);
      const page = { ...answer, url: current.url, visited };
      if (options.follow === false) return page;
      const location = answer.headers.location;
      if (REDIRECTS.includes(answer.status) && location !== undefined) {
        // Every redirect here is followed with a GET: none of these flows sends a 307/308 after a POST.
        const next = new URL(location, current.url).href;
        if (options.stopAt?.test(next)) return page;
        current = { url: next, method: 'GET', body: undefined, headers: {} };
      } else if (answer.status === 200 && AUTO_POST.test(answer.text)) {
        const form = parseForm(answer.text);
        if (options.stopAt?.test(form.action)) return page;
        this.lastForm = form;
        current = { url: form.action, method: 'POST', body: new URLSearchParams(form.fields).toString(), headers: {} };
      } else return page;
    }
    throw new Error(`more than ${MAX_HOPS} redirects or form posts: ${visited.slice(-10).join(' → ')}`);
  }

  private request(url: string, method: string, headers: Record<string, string>, body?: string): Promise<Omit<Page, 'url' | 'visited'>> {
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
            ...(body !== undefined && { 'content-type': 'application/x-www-form-urlencoded' }),
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
      req.end(body);
    });
  }

  /** Keeps what Set-Cookie says; an empty value, Max-Age=0 or an expiry in 1970 clears the cookie. */
  private keep(host: string, setCookies: string[]): void {
    for (const line of setCookies) {
      const [pair, ...attributes] = line.split(';');
      const eq = pair!.indexOf('=');
      const name = pair!.slice(0, eq).trim();
      const value = pair!.slice(eq + 1).trim();
      const gone = value === '' || attributes.some((a) => /^\s*max-age=0\s*$/i.test(a)) || /expires=thu, 01 jan 1970/i.test(line);
      if (gone) this.jar.get(host)?.delete(name);
      else this.setCookie(host, name, value);
    }
  }
}
