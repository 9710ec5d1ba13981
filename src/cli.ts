#!/usr/bin/env node
// edgeplane <command>: the operator's one entry. Each command is a row of COMMANDS with its
// own help; arguments are parsed by node:util's parseArgs.
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { parseArgs } from 'node:util';
import closeWithGrace from 'close-with-grace';
import { ConfigError, loadConfig, readSettings, SETTINGS, type Config, type RawSettings, type SettingName } from './config.js';
import { systemClock } from './core/time.js';
import { backupStore, BackupError, type BackupProgress, type BackupResult } from './db/backup.js';
import { openMigrated, type Store } from './db/store.js';
import { StoreStartError } from './db/store-problems.js';
import { ListenError } from './listen-errors.js';
import { managedCertificates, statusLine } from './certificates/certificate-report.js';
import { IpRestrictionOperator } from './resources/ip-restrictions/ip-restriction.operator.js';
import { AccountService, ConflictError, InputError, ROLES, type IssuedUser } from './accounts/account.service.js';
import { shutdownLimitMs, startServer } from './main.js';

/** Exit codes: 0 done, 1 an unexpected failure (a bug: the stack is printed), 2 usage, settings, input or the store, 3 exists already. */
const EXIT = { usage: 2, conflict: 3 } as const;

/** The options a command may take besides the settings, with their help. */
const OPTIONS = {
  name: { type: 'string', arg: 'NAME', help: 'the name (at most 255 bytes)' },
  account: { type: 'string', arg: 'ID', help: 'the account (acct_…)' },
  'all-accounts': { type: 'boolean', help: 'every account' },
  user: { type: 'string', arg: 'ID', help: "the user who owns the key (usr_…); default: the account's oldest admin" },
  role: { type: 'string', arg: ROLES.join('|'), help: "the user's role" },
  description: { type: 'string', arg: 'TEXT', help: "the key's description (at most 255 bytes)" },
  id: { type: 'string', arg: 'ipx_…', help: 'the IP restriction, by id' },
  type: { type: 'string', arg: 'api|dashboard|agent|endpoints', help: 'the IP restriction, by its type' },
  json: { type: 'boolean', help: 'print the result as one line of JSON' },
} as const;
type Option = keyof typeof OPTIONS;

interface Invocation {
  values: Partial<Record<Option, string | boolean>>;
  settings: RawSettings;
  json: boolean;
  /** The positional arguments after the command's words, one per name in its `arguments`. */
  arguments: string[];
}

interface Command {
  /** The words that name it: `accounts create`. */
  words: string;
  /** What follows the words in its usage line. */
  synopsis: string;
  summary: string;
  /** More lines for its --help. */
  details?: string;
  options: readonly Option[];
  /** The names of the positional arguments it takes after its words, e.g. `FILE`. */
  arguments?: readonly string[];
  /** Whether it may create a new, empty SQLite store; the others need one that exists. */
  createsStore?: true;
  run(invocation: Invocation): Promise<void>;
}

class UsageError extends Error {}

/** The command being run, for the help that a usage problem points at. */
let current: Command | undefined;

function required(invocation: Invocation, option: Option): string {
  const value = invocation.values[option];
  if (typeof value !== 'string' || value === '') throw new UsageError(`--${option} is required`);
  return value;
}

function optional(invocation: Invocation, option: Option): string | undefined {
  const value = invocation.values[option];
  return typeof value === 'string' ? value : undefined;
}

function out(text: string): void {
  process.stdout.write(text.endsWith('\n') ? text : text + '\n');
}

function printIssued(invocation: Invocation, issued: IssuedUser, lines: string[]): void {
  out(invocation.json ? JSON.stringify(issued) : [...lines, `api key ${issued.api_key_id}`, `token (shown once): ${issued.token}`].join('\n'));
}

function config(invocation: Invocation): Config {
  return loadConfig(readSettings(process.env, invocation.settings));
}

/** Opens (and migrates) the configured store for `work`; a command that needs an existing SQLite store refuses a missing one rather than creating it empty. */
async function withStore<T>(invocation: Invocation, command: Command, work: (accounts: AccountService, store: Store) => Promise<T>): Promise<T> {
  const settings = config(invocation);
  if (!command.createsStore && settings.database.kind === 'sqlite' && !fs.existsSync(settings.database.file)) {
    throw new InputError(
      `there is no store at ${settings.database.file}. Point --data-dir (EDGEPLANE_DATA_DIR) or --database-url at the server's store; ` +
        `'edgeplane serve', 'migrate' and 'accounts create' create a new one.`,
    );
  }
  const { store } = await openMigrated(settings);
  try {
    return await work(new AccountService(store, systemClock), store);
  } finally {
    await store.close();
  }
}

/** Progress on stderr, once a copy has taken more than a second, at most once a second. */
function progressReporter(): (progress: BackupProgress) => void {
  const started = Date.now();
  let shown = 0;
  return ({ totalPages, remainingPages }) => {
    const now = Date.now();
    const done = remainingPages === 0;
    if (now - started < 1_000 || (!done && now - shown < 1_000) || (done && shown === 0)) return;
    shown = now;
    const percent = totalPages ? Math.floor((100 * (totalPages - remainingPages)) / totalPages) : 100;
    const line = `backup: ${percent}% (${totalPages - remainingPages} of ${totalPages} pages)`;
    if (process.stderr.isTTY) process.stderr.write(`\r${line}${done ? '\n' : ''}`);
    else process.stderr.write(line + '\n');
  };
}

function backupJson(result: BackupResult) {
  const { source, target, pages, pageSize, bytes, migrations } = result;
  return { source, target, pages, page_size: pageSize, bytes, integrity: 'ok', migrations };
}

function backupSummary(result: BackupResult, settings: Config): string {
  const last = result.migrations.at(-1);
  return [
    `backed up ${result.source} to ${result.target}: ${result.pages} pages, ${result.bytes} bytes; integrity_check and quick_check: ok`,
    last ? `schema: ${result.migrations.length} migrations recorded, the last ${last}` : 'schema: no migrations recorded in the copy',
    `the master key is not in the copy: keep ${settings.masterKey ? 'EDGEPLANE_MASTER_KEY' : path.join(settings.dataDir, 'master.key')} apart from it`,
  ].join('\n');
}

const COMMANDS: readonly Command[] = [
  {
    words: 'serve',
    synopsis: '',
    summary: 'start the API server (migrates the store first)',
    details:
      'Runs in the foreground until SIGINT or SIGTERM, then stops accepting and finishes the requests and streams\n' +
      'in flight (EDGEPLANE_DRAIN_TIMEOUT, 10 s by default), ends the agent sessions and exits (5 s more at most).\n' +
      'On an empty store it creates a `default` account and hands over its first admin API key token.',
    options: [],
    createsStore: true,
    async run(invocation) {
      const settings = config(invocation);
      const server = await startServer(settings);
      closeWithGrace({ delay: shutdownLimitMs(settings) }, async ({ err }) => {
        if (err) server.deps.logger.error({ err }, 'shutting down after an error');
        await server.close();
      });
    },
  },
  {
    words: 'migrate',
    synopsis: '',
    summary: 'apply database migrations and exit',
    options: [],
    createsStore: true,
    async run(invocation) {
      const { store, applied } = await openMigrated(config(invocation));
      await store.close();
      out(applied.length ? `applied: ${applied.join(', ')}` : 'already up to date');
    },
  },
  {
    words: 'backup',
    arguments: ['FILE'],
    synopsis: 'FILE [--json]',
    summary: 'make an online, consistent copy of the SQLite store while the server runs',
    details:
      'The copy is the store as it was at one moment; the server goes on serving and writing meanwhile.\n' +
      'FILE must not exist: it appears only once the copy is complete and has passed its integrity check.\n' +
      'The master key is not in the copy: back it up apart (docs/operations.md, "Backups", says how to restore).\n' +
      'A PostgreSQL store is refused: use pg_dump.',
    options: ['json'],
    async run(invocation) {
      const target = path.resolve(invocation.arguments[0]!);
      const settings = config(invocation);
      const result = await backupStore(settings.database, target, progressReporter());
      out(invocation.json ? JSON.stringify(backupJson(result)) : backupSummary(result, settings));
    },
  },
  {
    words: 'accounts create',
    synopsis: '--name NAME [--json]',
    summary: 'create an account, its admin user and first API key',
    details: 'Account names are unique: a name in use exits 3.',
    options: ['name', 'json'],
    createsStore: true,
    async run(invocation) {
      const name = required(invocation, 'name');
      const issued = await withStore(invocation, this, (a) => a.createAccount({ name }));
      printIssued(invocation, issued, [`account ${issued.account_id}`, `admin user ${issued.user_id}`]);
    },
  },
  {
    words: 'accounts list',
    synopsis: '[--json]',
    summary: 'list accounts, newest first',
    options: ['json'],
    async run(invocation) {
      const accounts = await withStore(invocation, this, (a) => a.listAccounts());
      if (invocation.json) out(JSON.stringify({ accounts }));
      else if (accounts.length === 0) out('no accounts yet; create one with: edgeplane accounts create --name NAME');
      else out(accounts.map((a) => `${a.id}\t${a.created_at}\t${a.name}`).join('\n'));
    },
  },
  {
    words: 'users create',
    synopsis: `--account ID --name NAME --role ${ROLES.join('|')} [--json]`,
    summary: 'create a user of an account and its first API key',
    details: 'User names are unique within an account: a name in use exits 3.',
    options: ['account', 'name', 'role', 'json'],
    async run(invocation) {
      const input = { accountId: required(invocation, 'account'), name: required(invocation, 'name'), role: required(invocation, 'role') };
      const issued = await withStore(invocation, this, (a) => a.createUser(input));
      printIssued(invocation, issued, [`user ${issued.user_id}`]);
    },
  },
  {
    words: 'api-keys create',
    synopsis: '--account ID [--user ID] [--description TEXT] [--json]',
    summary: 'mint a new API key for a user of an account (default: its oldest admin)',
    details: 'For an admin who lost every token: the first one is shown only once. Nothing else changes; revoke lost keys with DELETE /api_keys/{id}.',
    options: ['account', 'user', 'description', 'json'],
    async run(invocation) {
      const input = { accountId: required(invocation, 'account'), userId: optional(invocation, 'user'), description: optional(invocation, 'description') };
      const issued = await withStore(invocation, this, (a) => a.createApiKey(input));
      printIssued(invocation, issued, [`user ${issued.user_id}`]);
    },
  },
  {
    words: 'ip-restrictions list',
    synopsis: '--account ID [--json]',
    summary: "list an account's IP restrictions",
    options: ['account', 'json'],
    async run(invocation) {
      const accountId = required(invocation, 'account');
      const restrictions = await withStore(invocation, this, (_a, store) => new IpRestrictionOperator(store).list(accountId));
      if (invocation.json) out(JSON.stringify({ ip_restrictions: restrictions }));
      else if (restrictions.length === 0) out(`account ${accountId} has no IP restrictions`);
      else out(restrictions.map((r) => `${r.id}\t${r.type}\t${r.enforced ? 'enforced' : 'warn only'}\t${r.ip_policy_ids.join(',')}`).join('\n'));
    },
  },
  {
    words: 'ip-restrictions delete',
    synopsis: '--account ID (--id ipx_… | --type api|dashboard|agent|endpoints)',
    summary: 'delete one, e.g. to let an account that locked itself out reach its API again',
    details: 'Running servers see the change within 2 s.',
    options: ['account', 'id', 'type'],
    async run(invocation) {
      const accountId = required(invocation, 'account');
      const which = { id: optional(invocation, 'id'), type: optional(invocation, 'type') };
      if (!which.id === !which.type) throw new UsageError('give exactly one of --id or --type');
      const deleted = await withStore(invocation, this, (_a, store) => new IpRestrictionOperator(store).delete(accountId, which));
      if (!deleted) throw new InputError(`account ${accountId} has no IP restriction ${which.id ?? `of type '${which.type}'`}`);
      out(`deleted ${deleted}`);
    },
  },
  {
    words: 'certificates status',
    synopsis: '(--account ID | --all-accounts) [--json]',
    summary: 'show each managed certificate: its state and days to expiry',
    details:
      'One line per reserved domain or agent ingress under a certificate management policy: account, id, domain, state\n' +
      '(issued, provisioning, renewing or failing), expiry with the days left, and the next renewal or the error.',
    options: ['account', 'all-accounts', 'json'],
    async run(invocation) {
      const accountId = optional(invocation, 'account');
      if ((accountId === undefined) === (invocation.values['all-accounts'] !== true)) throw new UsageError('give exactly one of --account or --all-accounts');
      const statuses = await withStore(invocation, this, (_a, store) => managedCertificates(store, new Date(), accountId));
      if (invocation.json) out(JSON.stringify({ certificates: statuses }));
      else if (statuses.length === 0) out('no managed certificates');
      else out(statuses.map(statusLine).join('\n'));
    },
  },
];

const SETTING_ROWS = Object.values(SETTINGS);
const ENV_WIDTH = Math.max(...SETTING_ROWS.map(([env]) => env.length));
const FLAG_WIDTH = Math.max(...SETTING_ROWS.map(([, flag]) => flag.length));

function commandList(commands: readonly Command[]): string {
  return commands
    .map((c) => {
      const usage = `  ${c.words} ${c.synopsis}`.trimEnd();
      return usage.length <= 40 ? `${usage.padEnd(42)}${c.summary}` : `${usage}\n${' '.repeat(42)}${c.summary}`;
    })
    .join('\n');
}

/** The package's version: package.json sits one directory above both src/ and dist/. */
function version(): string {
  return (createRequire(import.meta.url)('../package.json') as { version: string }).version;
}

const USAGE = `usage: edgeplane <command> [options] [settings]
       edgeplane --version

commands:
${commandList(COMMANDS)}

'edgeplane <command> --help' describes one command.

settings (environment variable, or the flag that overrides it), taken by every command:
${SETTING_ROWS.map(([env, flag, what]) => `  ${env.padEnd(ENV_WIDTH)} ${flag.padEnd(FLAG_WIDTH)} ${what}`).join('\n')}

exit codes: 0 done; 1 an unexpected failure; 2 a usage, settings, input or store problem; 3 already exists.
`;

function commandHelp(command: Command): string {
  const width = Math.max(...command.options.map((o) => `--${o} ${'arg' in OPTIONS[o] ? OPTIONS[o].arg : ''}`.length), 0) + 2;
  const options = command.options.map((o) => {
    const option = OPTIONS[o];
    return `  ${`--${o} ${'arg' in option ? option.arg : ''}`.padEnd(width)}${option.help}`;
  });
  return [
    `usage: edgeplane ${command.words} ${command.synopsis}`.trimEnd() + ' [settings]',
    '',
    command.summary[0]!.toUpperCase() + command.summary.slice(1) + '.',
    ...(command.details ? [command.details] : []),
    ...(options.length ? ['', 'options:', ...options] : []),
    '',
    "settings: where the store is and how to serve (--data-dir, --database-url, …); 'edgeplane --help' lists them.",
    '',
  ].join('\n');
}

const settingFlags = Object.fromEntries(SETTING_ROWS.map(([, flag]) => [flag.slice(2), { type: 'string' as const }]));
const optionFlags = Object.fromEntries(Object.entries(OPTIONS).map(([name, o]) => [name, { type: o.type }]));

function settingsFrom(values: Record<string, unknown>): RawSettings {
  const settings: RawSettings = {};
  for (const [name, [, flag]] of Object.entries(SETTINGS) as [SettingName, readonly string[]][]) {
    const value = values[(flag as string).slice(2)];
    if (typeof value === 'string') settings[name] = value;
  }
  return settings;
}

/**
 * The command named by the positionals: its words exactly, or, for a command that takes
 * arguments, its words followed by anything (checked by commandArguments).
 */
function findCommand(positionals: string[]): Command | undefined {
  return COMMANDS.find((c) => {
    const count = c.words.split(' ').length;
    return positionals.slice(0, count).join(' ') === c.words && (positionals.length === count || c.arguments !== undefined);
  });
}

/** The positionals after the command's words: exactly one per argument it names. */
function commandArguments(command: Command, positionals: string[]): string[] {
  const given = positionals.slice(command.words.split(' ').length);
  const names = command.arguments ?? [];
  if (given.length < names.length) throw new UsageError(`'${command.words}' needs ${names.slice(given.length).join(' ')}`);
  if (given.length > names.length)
    throw new UsageError(`'${command.words}' takes ${names.length ? names.join(' ') : 'no argument'}, not also '${given[names.length]}'`);
  return given;
}

/** Runs the command line; resolves with the exit code when the process should exit (serve resolves undefined and keeps running). */
async function run(argv: string[]): Promise<number | undefined> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: { ...settingFlags, ...optionFlags, help: { type: 'boolean', short: 'h' }, version: { type: 'boolean' } },
  });
  // The option types are built from tables, which parseArgs cannot infer through.
  const given = values as Record<string, string | boolean | undefined>;
  const words = positionals.join(' ');
  if (positionals[0] === 'help') {
    const named = COMMANDS.find((c) => c.words === positionals.slice(1).join(' '));
    process.stdout.write(named ? commandHelp(named) : USAGE);
    return 0;
  }
  if (values.version) {
    process.stdout.write(`edgeplane ${version()} (Node.js ${process.versions.node})\n`);
    return 0;
  }
  if (positionals.length === 0) {
    if (values.help) {
      process.stdout.write(USAGE);
      return 0;
    }
    process.stderr.write(USAGE);
    return EXIT.usage;
  }
  const command = findCommand(positionals);
  if (!command) {
    // A group alone (`edgeplane accounts`) or with --help lists its commands.
    const group = COMMANDS.filter((c) => c.words.split(' ')[0] === positionals[0]);
    if (group.length > 0 && positionals.length === 1) {
      const text = `edgeplane ${positionals[0]} commands:\n${commandList(group)}\n\n'edgeplane ${group[0]!.words} --help' describes one.\n`;
      if (values.help) {
        process.stdout.write(text);
        return 0;
      }
      process.stderr.write(`edgeplane: '${positionals[0]}' needs a command\n\n${text}`);
      return EXIT.usage;
    }
    throw new UsageError(`unknown command '${words}'`);
  }
  if (values.help) {
    process.stdout.write(commandHelp(command));
    return 0;
  }
  current = command;
  const stray = (Object.keys(OPTIONS) as Option[]).find((o) => given[o] !== undefined && !command.options.includes(o));
  if (stray) throw new UsageError(`'${command.words}' takes no --${stray}`);
  const args = commandArguments(command, positionals);
  await command.run({ values: given, settings: settingsFrom(given), json: given.json === true, arguments: args });
  return command.words === 'serve' ? undefined : 0;
}

function isUsageProblem(error: unknown): boolean {
  return error instanceof UsageError || ((error as { code?: string })?.code ?? '').startsWith('ERR_PARSE_ARGS');
}

run(process.argv.slice(2)).then(
  (code) => {
    if (code !== undefined) process.exitCode = code;
  },
  (error: unknown) => {
    if (isUsageProblem(error)) {
      process.stderr.write(`edgeplane: ${(error as Error).message}\n${current ? `\n${commandHelp(current)}` : "see 'edgeplane --help'\n"}`);
      process.exit(EXIT.usage);
    }
    if (error instanceof ConflictError) {
      process.stderr.write(`edgeplane: ${error.message}\n`);
      process.exit(EXIT.conflict);
    }
    if (
      error instanceof ConfigError ||
      error instanceof InputError ||
      error instanceof StoreStartError ||
      error instanceof BackupError ||
      error instanceof ListenError
    ) {
      process.stderr.write(`edgeplane: ${error.message}\n`);
      process.exit(EXIT.usage);
    }
    process.stderr.write(`edgeplane: ${(error as Error)?.stack ?? String(error)}\n`);
    process.exit(1);
  },
);
