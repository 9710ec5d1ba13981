// How an HTTPS edge reads a request target and picks a route (src/edges/routes.ts): the path is
// normalized (RFC 3986 §6.2.2) before any route is matched, so that the route and the upstream see
// the same resource; then an exact_path route, else the longest path_prefix, else none.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { HttpsRoute, RouteMatchType } from '../../src/edges/edge-config.js';
import { matchRoute, normalizeTarget } from '../../src/edges/routes.js';

const path = (target: string) => normalizeTarget(target)?.path;

describe('normalizeTarget', () => {
  it('keeps a path that is already normal, and splits off the query', () => {
    assert.deepEqual(normalizeTarget('/'), { path: '/', query: '' });
    assert.deepEqual(normalizeTarget('/a/b'), { path: '/a/b', query: '' });
    assert.deepEqual(normalizeTarget('/a/b/'), { path: '/a/b/', query: '' });
    assert.deepEqual(normalizeTarget('/a/b?x=1&y=2'), { path: '/a/b', query: 'x=1&y=2' });
  });

  it('decodes percent-encoded unreserved characters, in either case', () => {
    assert.equal(path('/%61dmin'), '/admin');
    assert.equal(path('/%41%5A%61%7a'), '/AZaz');
    assert.equal(path('/%30%39'), '/09');
    assert.equal(path('/%2d%2E%5f%7E'), '/-._~');
    assert.equal(path('/%4F%50%6f%70'), '/OPop');
  });

  it('keeps reserved and other escapes encoded, upper-cased', () => {
    assert.equal(path('/a%2fb'), '/a%2Fb');
    assert.equal(path('/a%2Fb'), '/a%2Fb');
    assert.equal(path('/a%3fb%23c'), '/a%3Fb%23c');
    assert.equal(path('/%20%25%c3%a9'), '/%20%25%C3%A9');
    assert.equal(path('/%40%5b%60%7b%7f'), '/%40%5B%60%7B%7F');
  });

  it('decodes in one pass: an encoded percent sign is not decoded again', () => {
    assert.equal(path('/%2561dmin'), '/%2561dmin');
    assert.equal(path('/%252e%252e/admin'), '/%252e%252e/admin');
  });

  it('removes single-dot segments', () => {
    assert.equal(path('/a/./b'), '/a/b');
    assert.equal(path('/./a'), '/a');
    assert.equal(path('/a/././b/'), '/a/b/');
  });

  it('removes double-dot segments with the segment before them', () => {
    assert.equal(path('/public/../admin'), '/admin');
    assert.equal(path('/a/b/../c'), '/a/c');
    assert.equal(path('/a/b/../../c'), '/c');
    assert.equal(path('/a/b/c/../../d/e'), '/a/d/e');
  });

  it('removes dot segments that were percent-encoded', () => {
    assert.equal(path('/public/%2e%2e/admin'), '/admin');
    assert.equal(path('/public/%2E%2E/admin'), '/admin');
    assert.equal(path('/public/.%2e/admin'), '/admin');
    assert.equal(path('/public/%2e./admin'), '/admin');
    assert.equal(path('/a/%2e/b'), '/a/b');
  });

  it('never goes above the root', () => {
    assert.equal(path('/..'), '/');
    assert.equal(path('/../admin'), '/admin');
    assert.equal(path('/../../../etc/passwd'), '/etc/passwd');
    assert.equal(path('/a/../../b'), '/b');
    assert.equal(path('/%2e%2e/%2e%2e/admin'), '/admin');
  });

  it('keeps a trailing slash where a trailing dot segment was', () => {
    assert.equal(path('/a/.'), '/a/');
    assert.equal(path('/a/b/..'), '/a/');
    assert.equal(path('/a/..'), '/');
    assert.equal(path('/.'), '/');
    assert.equal(path('/a/b/%2e%2e'), '/a/');
    assert.equal(path('/a/%2e'), '/a/');
  });

  it('does not treat segments that merely contain dots as dot segments', () => {
    assert.equal(path('/a/.../b'), '/a/.../b');
    assert.equal(path('/a/..b/c'), '/a/..b/c');
    assert.equal(path('/a/b../c'), '/a/b../c');
    assert.equal(path('/.well-known/x'), '/.well-known/x');
  });

  it('does not take an encoded slash for a segment boundary', () => {
    assert.equal(path('/a/b%2f..%2fc'), '/a/b%2F..%2Fc');
    assert.equal(path('/a/..%2fadmin'), '/a/..%2Fadmin');
  });

  it('keeps the query exactly as sent, dot segments and escapes included', () => {
    assert.deepEqual(normalizeTarget('/%61/../b?q=%61&r=/../x&s=%2f'), { path: '/b', query: 'q=%61&r=/../x&s=%2f' });
    assert.deepEqual(normalizeTarget('/a?'), { path: '/a', query: '' });
    assert.deepEqual(normalizeTarget('/a?b?c'), { path: '/a', query: 'b?c' });
  });

  it('drops the fragment, and a ? after the # is part of the fragment', () => {
    assert.deepEqual(normalizeTarget('/a#frag'), { path: '/a', query: '' });
    assert.deepEqual(normalizeTarget('/a?x=1#frag'), { path: '/a', query: 'x=1' });
    assert.deepEqual(normalizeTarget('/a#frag?x=1'), { path: '/a', query: '' });
  });

  it('reads the path and query of an absolute-form target', () => {
    assert.deepEqual(normalizeTarget('http://h/p?q'), { path: '/p', query: 'q' });
    assert.deepEqual(normalizeTarget('https://app.example.com:8443/a/../%61dmin?x=1#f'), { path: '/admin', query: 'x=1' });
    assert.deepEqual(normalizeTarget('HTTP://H/P'), { path: '/P', query: '' });
    assert.deepEqual(normalizeTarget('http://h'), { path: '/', query: '' });
    assert.deepEqual(normalizeTarget('http://h?q=1'), { path: '/', query: 'q=1' });
    assert.deepEqual(normalizeTarget('http://h#f'), { path: '/', query: '' });
  });

  it('refuses a target that is not a path', () => {
    assert.equal(normalizeTarget('*'), undefined);
    assert.equal(normalizeTarget(''), undefined);
    assert.equal(normalizeTarget('a/b'), undefined);
    assert.equal(normalizeTarget('example.com:443'), undefined);
  });
});

let routeCount = 0;
function route(matchType: RouteMatchType, match: string): HttpsRoute {
  routeCount++;
  return { id: `edghtsrt_${routeCount}`, edgeId: 'edghts_1', matchType, match, modules: {} };
}
const exact = (match: string) => route('exact_path', match);
const prefix = (match: string) => route('path_prefix', match);

describe('matchRoute', () => {
  it('takes an exact_path route only for that very path', () => {
    const r = exact('/login');
    assert.equal(matchRoute([r], '/login'), r);
    assert.equal(matchRoute([r], '/login/'), undefined);
    assert.equal(matchRoute([r], '/logins'), undefined);
    assert.equal(matchRoute([r], '/'), undefined);
  });

  it('prefers an exact_path route over any prefix, wherever it is listed', () => {
    const root = prefix('/');
    const login = prefix('/login');
    const loginExact = exact('/login');
    assert.equal(matchRoute([root, login, loginExact], '/login'), loginExact);
    assert.equal(matchRoute([loginExact, root, login], '/login'), loginExact);
    assert.equal(matchRoute([root, loginExact, login], '/login'), loginExact);
    // Elsewhere the prefixes still serve.
    assert.equal(matchRoute([root, login, loginExact], '/login/x'), login);
    assert.equal(matchRoute([root, login, loginExact], '/other'), root);
  });

  it('takes the longest matching prefix, whatever the order', () => {
    const root = prefix('/');
    const api = prefix('/api');
    const v1 = prefix('/api/v1');
    for (const routes of [
      [root, api, v1],
      [v1, api, root],
      [api, v1, root],
    ]) {
      assert.equal(matchRoute(routes, '/api/v1/users'), v1);
      assert.equal(matchRoute(routes, '/api/v2'), api);
      assert.equal(matchRoute(routes, '/static/x.css'), root);
      assert.equal(matchRoute(routes, '/'), root);
    }
  });

  it('matches a prefix as a string, not by segments', () => {
    const api = prefix('/api');
    assert.equal(matchRoute([api], '/apis'), api);
    assert.equal(matchRoute([api], '/api'), api);
    assert.equal(matchRoute([api], '/api/v1'), api);
    assert.equal(matchRoute([api], '/ap'), undefined);
    assert.equal(matchRoute([api], '/API'), undefined);
    const slashed = prefix('/api/');
    assert.equal(matchRoute([slashed], '/api'), undefined);
    assert.equal(matchRoute([slashed], '/api/x'), slashed);
  });

  it('takes the first of two routes with the same match', () => {
    const first = prefix('/api');
    const second = prefix('/api');
    assert.equal(matchRoute([first, second], '/api/x'), first);
    assert.equal(matchRoute([second, first], '/api/x'), second);
    const firstExact = exact('/x');
    const secondExact = exact('/x');
    assert.equal(matchRoute([firstExact, secondExact], '/x'), firstExact);
    assert.equal(matchRoute([secondExact, firstExact], '/x'), secondExact);
  });

  it('takes no route when none matches', () => {
    assert.equal(matchRoute([], '/'), undefined);
    assert.equal(matchRoute([prefix('/api'), exact('/'), prefix('/static/')], '/index.html'), undefined);
  });

  it('matches the normalized path, so a dot segment cannot leave a route', () => {
    const pub = prefix('/public/');
    const admin = prefix('/admin/');
    const routes = [pub, admin];
    assert.equal(matchRoute(routes, path('/public/../admin/x')!), admin);
    assert.equal(matchRoute(routes, path('/public/%2e%2e/admin/x')!), admin);
    assert.equal(matchRoute(routes, path('/%70ublic/x')!), pub);
  });
});
