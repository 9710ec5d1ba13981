// @peculiar/x509, made ready once for every user: it needs reflect-metadata loaded first and a
// WebCrypto implementation (Node's) to sign and verify with.
import { webcrypto } from 'node:crypto';
import 'reflect-metadata';
import * as x509 from '@peculiar/x509';

x509.cryptoProvider.set(webcrypto as unknown as Crypto);

export { x509 };
