// The management API of an edgeplane that runs in another process (bench/server-process.ts), as
// a user calls it: JSON over HTTP with an account's token.
import { jsonOrUndefined } from '../test/helpers/json.js';

export interface ApiAnswer {
  status: number;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  json: any;
  text: string;
}

export class BenchApi {
  constructor(
    readonly baseUrl: string,
    readonly token: string,
  ) {}

  async request(method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', path: string, body?: unknown): Promise<ApiAnswer> {
    const headers: Record<string, string> = { Authorization: `Bearer ${this.token}`, 'Service-Version': '2' };
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    const res = await fetch(this.baseUrl + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await res.text();
    return { status: res.status, json: jsonOrUndefined(text), text };
  }

  /** A POST that must answer 201; its body. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  async created(path: string, body: Record<string, unknown>): Promise<any> {
    const answer = await this.request('POST', path, body);
    if (answer.status !== 201) throw new Error(`POST ${path}: ${answer.status} ${answer.text.slice(0, 300)}`);
    return answer.json;
  }

  /** The same account against another instance. */
  at(baseUrl: string): BenchApi {
    return new BenchApi(baseUrl, this.token);
  }
}
