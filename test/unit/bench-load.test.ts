// The benchmark's load generators (bench/load.ts) against real servers: one load spread over two
// servers reaches both, with the connections split and the rates summed. wrk is installed by the
// tests' setup (scripts/ensure-test-tools.sh); autocannon comes with the dev dependencies.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { chooseLoadTool, parseWrk, type LoadTarget } from '../../bench/load.js';

interface Counting {
  url: string;
  requests: number;
  /** Distinct client sockets seen. */
  sockets: Set<string>;
  close(): Promise<void>;
}

async function countingServer(): Promise<Counting> {
  const counting = { requests: 0, sockets: new Set<string>() } as Counting;
  const server = http.createServer((req, res) => {
    counting.requests++;
    counting.sockets.add(`${req.socket.remotePort}`);
    if (req.headers['x-bench'] !== 'yes') res.statusCode = 400;
    res.end('{}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  counting.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/x`;
  counting.close = () => new Promise((resolve) => server.close(() => resolve()));
  return counting;
}

for (const name of ['wrk', 'autocannon'] as const) {
  describe(`bench load generator: ${name}`, () => {
    const servers: Counting[] = [];
    before(async () => {
      servers.push(await countingServer(), await countingServer());
    });
    after(async () => {
      for (const s of servers) await s.close();
    });

    it('spreads one load evenly over two servers, with the headers, and sums the rates', async () => {
      process.env.BENCH_LOAD_TOOL = name;
      const tool = chooseLoadTool(10);
      delete process.env.BENCH_LOAD_TOOL;
      try {
        const targets: LoadTarget[] = servers.map((s) => ({ url: s.url, method: 'GET', headers: { 'X-Bench': 'yes' } }));
        const result = await tool.spread(targets, 1);
        const [one, two] = servers as [Counting, Counting];
        assert.ok(one.requests > 100 && two.requests > 100, `requests: ${one.requests} and ${two.requests}`);
        assert.equal(one.sockets.size, 5, 'half of the 10 connections on the first server');
        assert.equal(two.sockets.size, 5, 'half of the 10 connections on the second server');
        assert.equal(result.non2xx, 0, 'every request carried the header');
        // The summed rate is what the servers counted, over about a second (connection set-up and
        // the requests in flight at the end make the two differ a little).
        const counted = one.requests + two.requests;
        assert.ok(result.rate > counted * 0.5 && result.rate < counted * 1.5, `rate ${result.rate}, counted ${counted}`);
      } finally {
        tool.dispose();
      }
    });
  });
}

describe('parseWrk', () => {
  it('reads the rate, the 99th percentile, non-2xx responses and socket errors', () => {
    const result = parseWrk(
      [
        'Running 1s test @ http://127.0.0.1:1/x',
        '  Latency Distribution',
        '     50%  1.00ms',
        '     99%  2.50ms',
        '  1000 requests in 1.00s, 100.00KB read',
        '  Socket errors: connect 1, read 2, write 3, timeout 4',
        '  Non-2xx or 3xx responses: 7',
        'Requests/sec:   1000.50',
      ].join('\n'),
    );
    assert.deepEqual(result, { rate: 1000.5, p99Ms: 2.5, non2xx: 7, errors: 10 });
  });
});
