#!/usr/bin/env node
// edgeplane serve | migrate | accounts create|list | users create — one entry, subcommands.
import { parseArgs } from 'node:util';
import closeWithGrace from 'close-with-grace';
import { ConfigError, loadConfig, readSettings, SETTINGS, type RawSettings, type SettingName } from './config.js';
import { systemClock } from './core/time.js';
import { migrate, openStore, type Store } from './db/store.js';
import { IpRestrictionOperator } from './modules/ip-restrictions/ip-restriction.operator.js';
import { AccountService, InputError, ROLES } from './modules/accounts/account.service.js';
import { startServer } from './main.js';

const ENV_WIDTH = Math.max(...Object.values(SETTINGS).map(([env]) => env.length));
const FLAG_WIDTH = Math.max(...Object.values(SETTINGS).map(([, flag]) => flag.length));

const USAGE = `usage: edgeplane <command> [options]

commands:
  serve                                   start the API server (migrates the store first)
  migrate                                 apply database migrations and exit
  accounts create --name NAME [--json]    create an account, its admin user and first API key
  accounts list [--json]                  list accounts
  users create --account ID --name NAME --role ${ROLES.join('|')} [--json]
                                          create a user of an account and its first API key
  ip-restrictions list --account ID [--json]
                                          list an account's IP restrictions
  ip-restrictions delete --account ID (--id ipx_… | --type api|dashboard|agent|endpoints)
                                          delete one, e.g. to let an account that locked itself
                                          out reach its API again (running servers see it within 2 s)

settings (environment variable, or the flag that overrides it):
${Object.values(SETTINGS)
  .map(([env, flag, what]) => `  ${env.padEnd(ENV_WIDTH)} ${flag.padEnd(FLAG_WIDTH)} ${what}`)
  .join('\n')}
`;

const settingFlags = Object.fromEntries(Object.values(SETTINGS).map(([, flag]) => [flag.slice(2), { type: 'string' as const }]));

function settingsFrom(values: Record<string, unknown>): RawSettings {
  const out: RawSettings = {};
  for (const [name, [, flag]] of Object.entries(SETTINGS) as [SettingName, readonly string[]][]) {
    const v = values[(flag as string).slice(2)];
    if (typeof v === 'string') out[name] = v;
  }
  return out;
}

class UsageError extends Error {}

async function withStore<T>(raw: RawSettings, work: (accounts: AccountService, store: Store) => Promise<T>): Promise<T> {
  const config = loadConfig(readSettings(process.env, raw));
  const store = openStore(config.database, { timeouts: config.databaseTimeouts });
  try {
    await migrate(store);
    return await work(new AccountService(store, systemClock), store);
  } finally {
    await store.close();
  }
}

function print(json: boolean, value: Record<string, unknown>, text: string): void {
  process.stdout.write(json ? JSON.stringify(value) + '\n' : text + '\n');
}

async function run(argv: string[]): Promise<void> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: {
      ...settingFlags,
      name: { type: 'string' },
      account: { type: 'string' },
      role: { type: 'string' },
      id: { type: 'string' },
      type: { type: 'string' },
      json: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  const [command, sub] = positionals;
  const raw = settingsFrom(values);
  const json = values.json === true;
  const need = (flag: 'name' | 'account' | 'role') => {
    const v = values[flag];
    if (typeof v !== 'string' || v === '') throw new UsageError(`--${flag} is required`);
    return v;
  };

  if (values.help || command === undefined || command === 'help') {
    process.stdout.write(USAGE);
    return;
  }
  if (command === 'serve') {
    const server = await startServer(loadConfig(readSettings(process.env, raw)));
    closeWithGrace({ delay: 10_000 }, async ({ err }) => {
      if (err) server.deps.logger.error({ err }, 'shutting down after an error');
      await server.close();
    });
    return;
  }
  if (command === 'migrate') {
    const config = loadConfig(readSettings(process.env, raw));
    const store = openStore(config.database, { timeouts: config.databaseTimeouts });
    try {
      const applied = await migrate(store);
      process.stdout.write(applied.length ? `applied: ${applied.join(', ')}\n` : 'already up to date\n');
    } finally {
      await store.close();
    }
    return;
  }
  if (command === 'accounts' && sub === 'create') {
    const name = need('name');
    const issued = await withStore(raw, (a) => a.createAccount({ name }));
    print(json, { ...issued }, `account ${issued.account_id}\nadmin user ${issued.user_id}\napi key ${issued.api_key_id}\ntoken (shown once): ${issued.token}`);
    return;
  }
  if (command === 'accounts' && sub === 'list') {
    const accounts = await withStore(raw, (a) => a.listAccounts());
    if (json) process.stdout.write(JSON.stringify({ accounts }) + '\n');
    else process.stdout.write(accounts.map((a) => `${a.id}\t${a.created_at}\t${a.name}`).join('\n') + (accounts.length ? '\n' : ''));
    return;
  }
  if (command === 'users' && sub === 'create') {
    const input = { accountId: need('account'), name: need('name'), role: need('role') };
    const issued = await withStore(raw, (a) => a.createUser(input));
    print(json, { ...issued }, `user ${issued.user_id}\napi key ${issued.api_key_id}\ntoken (shown once): ${issued.token}`);
    return;
  }
  if (command === 'ip-restrictions' && sub === 'list') {
    const accountId = need('account');
    const restrictions = await withStore(raw, (_a, store) => new IpRestrictionOperator(store).list(accountId));
    if (json) process.stdout.write(JSON.stringify({ ip_restrictions: restrictions }) + '\n');
    else if (restrictions.length === 0) process.stdout.write(`account ${accountId} has no IP restrictions\n`);
    else
      process.stdout.write(
        restrictions.map((r) => `${r.id}\t${r.type}\t${r.enforced ? 'enforced' : 'warn only'}\t${r.ip_policy_ids.join(',')}`).join('\n') + '\n',
      );
    return;
  }
  if (command === 'ip-restrictions' && sub === 'delete') {
    const accountId = need('account');
    const which = { id: typeof values.id === 'string' ? values.id : undefined, type: typeof values.type === 'string' ? values.type : undefined };
    if (!which.id === !which.type) throw new UsageError('give exactly one of --id or --type');
    const deleted = await withStore(raw, (_a, store) => new IpRestrictionOperator(store).delete(accountId, which));
    if (!deleted) throw new InputError(`account ${accountId} has no IP restriction ${which.id ?? `of type '${which.type}'`}`);
    process.stdout.write(`deleted ${deleted}\n`);
    return;
  }
  throw new UsageError(`unknown command '${[command, sub].filter(Boolean).join(' ')}'`);
}

run(process.argv.slice(2)).catch((error: unknown) => {
  if (
    error instanceof ConfigError ||
    error instanceof InputError ||
    error instanceof UsageError ||
    (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')
  ) {
    process.stderr.write(`edgeplane: ${(error as Error).message}\n`);
    if (error instanceof UsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) process.stderr.write(`\n${USAGE}`);
    process.exit(2);
  }
  process.stderr.write(`edgeplane: ${(error as Error)?.stack ?? String(error)}\n`);
  process.exit(1);
});
