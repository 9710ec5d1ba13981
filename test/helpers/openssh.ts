// Real OpenSSH for the tests: ssh-keygen to make keys and read certificates, sshd and ssh to
// log in with them. Everything lives in a temporary directory and on loopback.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from './ports.js';

export function tempDir(prefix = 'edgeplane-ssh-'): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

function run(command: string, args: string[]): { status: number | null; stdout: string; stderr: string } {
  const res = spawnSync(command, args, { encoding: 'utf8', timeout: 30_000 });
  return { status: res.status, stdout: res.stdout, stderr: res.stderr };
}

/** A new key pair made by ssh-keygen: its private key file and its public key line. */
export function keygen(dir: string, name: string, type: 'ed25519' | 'ecdsa' | 'rsa' | 'dsa', bits?: number): { file: string; publicKey: string } {
  const file = path.join(dir, name);
  const res = run('ssh-keygen', ['-q', '-t', type, ...(bits ? ['-b', String(bits)] : []), '-N', '', '-C', name, '-f', file]);
  if (res.status !== 0) throw new Error(`ssh-keygen -t ${type}: ${res.stderr}`);
  return { file, publicKey: fs.readFileSync(`${file}.pub`, 'utf8').trim() };
}

export interface Inspected {
  type: string;
  signingCa: string;
  keyId: string;
  serial: string;
  valid: string;
  principals: string[];
  criticalOptions: string[];
  extensions: string[];
}

/** What `ssh-keygen -L` reads in a certificate line (it also checks the CA's signature). */
export function inspect(certificate: string): Inspected {
  const dir = tempDir();
  try {
    const file = path.join(dir, 'cert.pub');
    fs.writeFileSync(file, certificate + '\n');
    const res = run('ssh-keygen', ['-L', '-f', file]);
    if (res.status !== 0) throw new Error(`ssh-keygen -L refused the certificate: ${res.stderr}`);
    const lines = res.stdout.split('\n').slice(1);
    const value = (label: string) =>
      lines
        .find((l) => l.trim().startsWith(`${label}:`))
        ?.trim()
        .slice(label.length + 1)
        .trim() ?? '';
    const block = (label: string) => {
      const start = lines.findIndex((l) => l.trim().startsWith(`${label}:`));
      const out: string[] = [];
      if (start === -1 || value(label) === '(none)') return out;
      for (const l of lines.slice(start + 1)) {
        if (!/^\s{16}\S/.test(l)) break;
        out.push(l.trim());
      }
      return out;
    };
    return {
      type: value('Type'),
      signingCa: value('Signing CA'),
      keyId: value('Key ID'),
      serial: value('Serial'),
      valid: value('Valid'),
      principals: block('Principals'),
      criticalOptions: block('Critical Options'),
      extensions: block('Extensions'),
    };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

export interface Sshd {
  port: number;
  log(): string;
  /** Waits (up to 5 s) until the log matches `pattern` (or satisfies it); the log so far either way. */
  waitForLog(pattern: RegExp | ((log: string) => boolean)): Promise<string>;
  stop(): Promise<void>;
}

/**
 * sshd on 127.0.0.1, as root, that trusts user certificates of `trustedUserCa` and/or the public
 * keys of `authorizedKeys` (lines as in authorized_keys); at least one of the two.
 */
export async function startSshd(
  dir: string,
  options: { trustedUserCa?: string; authorizedKeys?: string[]; hostKeyFile: string; hostCertificate?: string },
): Promise<Sshd> {
  if (options.trustedUserCa === undefined && !options.authorizedKeys?.length) throw new Error('startSshd: give trustedUserCa or authorizedKeys');
  fs.mkdirSync('/run/sshd', { recursive: true });
  const port = await freePort();
  if (options.trustedUserCa !== undefined) fs.writeFileSync(path.join(dir, 'trusted-ca.pub'), options.trustedUserCa + '\n');
  if (options.authorizedKeys?.length) fs.writeFileSync(path.join(dir, 'authorized_keys'), options.authorizedKeys.join('\n') + '\n');
  const config = [
    `Port ${port}`,
    'ListenAddress 127.0.0.1',
    `HostKey ${options.hostKeyFile}`,
    ...(options.hostCertificate ? [`HostCertificate ${path.join(dir, 'host-cert.pub')}`] : []),
    ...(options.trustedUserCa !== undefined ? [`TrustedUserCAKeys ${path.join(dir, 'trusted-ca.pub')}`] : []),
    options.authorizedKeys?.length ? `AuthorizedKeysFile ${path.join(dir, 'authorized_keys')}` : 'AuthorizedKeysFile none',
    'PasswordAuthentication no',
    'KbdInteractiveAuthentication no',
    'PermitRootLogin prohibit-password',
    'UsePAM no',
    'StrictModes no',
    `PidFile ${path.join(dir, 'sshd.pid')}`,
  ];
  if (options.hostCertificate) fs.writeFileSync(path.join(dir, 'host-cert.pub'), options.hostCertificate + '\n');
  const configFile = path.join(dir, 'sshd_config');
  fs.writeFileSync(configFile, config.join('\n') + '\n');
  const child = spawn('/usr/sbin/sshd', ['-D', '-e', '-f', configFile]);
  let log = '';
  child.stderr.on('data', (c) => (log += c));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`sshd did not start:\n${log}`)), 10_000);
    const check = () => {
      if (log.includes('Server listening')) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stderr.on('data', check);
    child.on('exit', (code) => reject(new Error(`sshd exited with ${code}:\n${log}`)));
  });
  return {
    port,
    log: () => log,
    async waitForLog(pattern) {
      const deadline = Date.now() + 5000;
      const done = typeof pattern === 'function' ? pattern : (l: string) => pattern.test(l);
      while (!done(log) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
      return log;
    },
    stop: () =>
      new Promise((resolve) => {
        child.removeAllListeners('exit');
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

/** `ssh root@127.0.0.1 true` with a key and its certificate; the exit status and what ssh said. */
export function sshLogin(
  dir: string,
  port: number,
  login: { keyFile: string; certificate: string; user?: string; knownHosts?: string },
): { status: number | null; stderr: string } {
  const certFile = `${login.keyFile}-cert.pub`;
  fs.writeFileSync(certFile, login.certificate + '\n');
  const knownHostsFile = path.join(dir, `known_hosts-${Math.random().toString(36).slice(2)}`);
  if (login.knownHosts !== undefined) fs.writeFileSync(knownHostsFile, login.knownHosts + '\n');
  const res = run('ssh', [
    '-F',
    '/dev/null',
    '-i',
    login.keyFile,
    '-o',
    `CertificateFile=${certFile}`,
    ...NON_INTERACTIVE,
    '-o',
    login.knownHosts === undefined ? 'StrictHostKeyChecking=no' : 'StrictHostKeyChecking=yes',
    '-o',
    `UserKnownHostsFile=${login.knownHosts === undefined ? '/dev/null' : knownHostsFile}`,
    '-o',
    'GlobalKnownHostsFile=/dev/null',
    '-p',
    String(port),
    `${login.user ?? 'root'}@127.0.0.1`,
    'true',
  ]);
  return { status: res.status, stderr: res.stderr };
}

/** ssh never asks anything and gives up on a host that does not answer. */
const NON_INTERACTIVE = ['-o', 'IdentitiesOnly=yes', '-o', 'BatchMode=yes', '-o', 'ConnectTimeout=10'];

/**
 * `ssh -R <forward> -p <port> <user>@127.0.0.1 <command…>`'s arguments as an edgeplane agent runs
 * it in the tests: no configuration of the user's or the system's, no prompt, only `keyFile`, and
 * the server's host key checked against `knownHosts` alone.
 */
export function sshAgentArgs(options: { keyFile: string; knownHosts: string; port: number; forward: string; user?: string; command: string[] }): string[] {
  return [
    '-F',
    '/dev/null',
    ...NON_INTERACTIVE,
    '-o',
    'StrictHostKeyChecking=yes',
    '-o',
    `UserKnownHostsFile=${options.knownHosts}`,
    '-o',
    'GlobalKnownHostsFile=/dev/null',
    '-i',
    options.keyFile,
    '-p',
    String(options.port),
    '-R',
    options.forward,
    `${options.user ?? 'v2'}@127.0.0.1`,
    ...options.command,
  ];
}

export interface ReverseForward {
  /** The port sshd listens on (127.0.0.1) for the forward. */
  port: number;
  /** With `printed`: its match in what ssh wrote. */
  printed?: RegExpExecArray;
  /** What ssh wrote on stderr so far. */
  log(): string;
  stop(): Promise<void>;
}

/**
 * `ssh -N -R 0:127.0.0.1:<targetPort> root@127.0.0.1 -p <sshdPort>` with a key: sshd listens on a
 * port it picks on its loopback and every connection to it is forwarded through the SSH connection
 * to 127.0.0.1:targetPort on this side. Resolves once ssh reports the allocated port (within 10 s).
 * With `command` (edgeplane's `http`, say), that command instead of -N, and with `printed`, once
 * the output also matches it.
 */
export async function sshReverseForward(
  sshdPort: number,
  login: { keyFile: string; targetPort: number; user?: string; command?: string[]; printed?: RegExp },
): Promise<ReverseForward> {
  const child = spawn('ssh', [
    '-F',
    '/dev/null',
    ...(login.command ? [] : ['-N']),
    '-i',
    login.keyFile,
    ...NON_INTERACTIVE,
    '-o',
    'ExitOnForwardFailure=yes',
    '-o',
    'StrictHostKeyChecking=no',
    '-o',
    'UserKnownHostsFile=/dev/null',
    '-o',
    'GlobalKnownHostsFile=/dev/null',
    '-R',
    `0:127.0.0.1:${login.targetPort}`,
    '-p',
    String(sshdPort),
    `${login.user ?? 'root'}@127.0.0.1`,
    ...(login.command ?? []),
  ]);
  let log = '';
  child.stdout.on('data', (c) => (log += c));
  child.stderr.on('data', (c) => (log += c));
  let printed: RegExpExecArray | undefined;
  const port = await new Promise<number>((resolve, reject) => {
    const fail = (why: string) => {
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(new Error(`${why}:\n${log.trim()}`));
    };
    const timer = setTimeout(() => fail('ssh -R did not report its forwarded port within 10 s'), 10_000);
    const check = () => {
      // ssh prints this (at its default LogLevel, INFO) when the server picked the port of `-R 0:…`.
      const allocated = /Allocated port (\d+) for remote forward/.exec(log);
      printed = login.printed?.exec(log) ?? undefined;
      if (allocated && (!login.printed || printed)) {
        clearTimeout(timer);
        resolve(Number(allocated[1]));
      }
    };
    child.stdout.on('data', check);
    child.stderr.on('data', check);
    child.once('error', (error) => fail(`ssh could not run: ${error.message}`));
    child.once('exit', (code, signal) => fail(`ssh exited with ${signal ?? `code ${code}`}`));
  });
  child.removeAllListeners('exit');
  return {
    port,
    ...(printed && { printed }),
    log: () => log,
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}
