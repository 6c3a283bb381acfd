/**
 * HTTPS material: on first start a local certificate authority and a server certificate
 * for `localhost`, `127.0.0.1` and `::1`, made with node-forge and kept in `<data dir>/tls/`
 * (`ca.pem` is the file clients trust through `NODE_EXTRA_CA_CERTS`). A given certificate
 * and key replace them.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { promisify } from 'node:util';
import type forgeType from 'node-forge';

// node-forge is loaded only when certificates are made (first start), not on every start.
let forgeModule: typeof forgeType | undefined;
const generateKeyPair = promisify(crypto.generateKeyPair);
const forgeLib = (): typeof forgeType => (forgeModule ??= createRequire(import.meta.url)('node-forge') as typeof forgeType);

/** Keys of a certificate: forge's key objects and the private key's PEM. */
interface RsaKeys {
  publicKey: forgeType.pki.rsa.PublicKey;
  privateKey: forgeType.pki.rsa.PrivateKey;
  pem: string;
}

/**
 * A 2048-bit RSA key pair made by node's native crypto on the thread pool (forge's pure-JS
 * generator takes seconds; the synchronous native one holds the event loop 100–200 ms).
 */
async function rsaKeys(): Promise<RsaKeys> {
  const { privateKey } = await generateKeyPair('rsa', { modulusLength: 2048, publicExponent: 0x10001 });
  const forge = forgeLib();
  const pem = privateKey.export({ type: 'pkcs1', format: 'pem' }) as string;
  const priv = forge.pki.privateKeyFromPem(pem) as forgeType.pki.rsa.PrivateKey;
  return { privateKey: priv, publicKey: forge.pki.setRsaPublicKey(priv.n, priv.e), pem };
}

/** Signs `cert` (SHA-256 with RSA) with native crypto: what forge's `cert.sign` does, without its pure-JS RSA. */
function sign(cert: forgeType.pki.Certificate, keyPem: string): void {
  const forge = forgeLib();
  const c = cert as any;
  c.siginfo.algorithmOid = c.signatureOid = forge.pki.oids.sha256WithRSAEncryption;
  c.md = forge.md.sha256.create();
  c.tbsCertificate = (forge.pki as any).getTBSCertificate(cert);
  const der = Buffer.from(forge.asn1.toDer(c.tbsCertificate).getBytes(), 'binary');
  c.signature = crypto.sign('sha256', der, keyPem).toString('binary');
}

/** PEM strings for the HTTPS listener, and where the CA file is. */
export interface TlsMaterial {
  cert: string;
  key: string;
  /** Path of the CA certificate clients should trust (undefined for a given certificate). */
  caFile?: string;
}

function serial(): string {
  const forge = forgeLib();
  return '01' + forge.util.bytesToHex(forge.random.getBytesSync(15));
}

function makeCa(keys: RsaKeys): { cert: forgeType.pki.Certificate; key: forgeType.pki.rsa.PrivateKey; pem: string } {
  const forge = forgeLib();
  const cert = forge.pki.createCertificate();
  cert.publicKey = keys.publicKey;
  cert.serialNumber = serial();
  cert.validity.notBefore = new Date(Date.now() - 24 * 3600 * 1000);
  cert.validity.notAfter = new Date(Date.now() + 10 * 365 * 24 * 3600 * 1000);
  const attrs = [{ name: 'commonName', value: 'Stratus Local Development CA' }, { name: 'organizationName', value: 'Stratus' }];
  cert.setSubject(attrs);
  cert.setIssuer(attrs);
  cert.setExtensions([
    { name: 'basicConstraints', cA: true, critical: true },
    { name: 'keyUsage', keyCertSign: true, cRLSign: true, critical: true },
    { name: 'subjectKeyIdentifier' },
  ]);
  sign(cert, keys.pem);
  return { cert, key: keys.privateKey, pem: keys.pem };
}

function makeServerCert(ca: { cert: forgeType.pki.Certificate; key: forgeType.pki.rsa.PrivateKey; pem: string }, keys: RsaKeys): { cert: forgeType.pki.Certificate; key: forgeType.pki.rsa.PrivateKey; pem: string } {
  const forge = forgeLib();
  const cert = forge.pki.createCertificate();
  cert.publicKey = keys.publicKey;
  cert.serialNumber = serial();
  cert.validity.notBefore = new Date(Date.now() - 24 * 3600 * 1000);
  cert.validity.notAfter = new Date(Date.now() + 397 * 24 * 3600 * 1000);
  cert.setSubject([{ name: 'commonName', value: 'localhost' }]);
  cert.setIssuer(ca.cert.subject.attributes);
  cert.setExtensions([
    { name: 'basicConstraints', cA: false },
    { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
    { name: 'extKeyUsage', serverAuth: true },
    { name: 'subjectAltName', altNames: [{ type: 2, value: 'localhost' }, { type: 7, ip: '127.0.0.1' }, { type: 7, ip: '::1' }] },
  ]);
  sign(cert, ca.pem);
  return { cert, key: keys.privateKey, pem: keys.pem };
}

/**
 * Loads or creates the HTTPS material; the two key pairs of a first start are made together
 * on the thread pool, so the caller's event loop stays free meanwhile.
 * @throws Error (rejects) when a given certificate or key file cannot be read.
 */
export async function loadTls(dataDir: string, certFile?: string, keyFile?: string): Promise<TlsMaterial> {
  if (certFile && keyFile) return { cert: fs.readFileSync(certFile, 'utf8'), key: fs.readFileSync(keyFile, 'utf8') };
  const dir = path.join(dataDir, 'tls');
  const files = { ca: path.join(dir, 'ca.pem'), caKey: path.join(dir, 'ca-key.pem'), cert: path.join(dir, 'server.pem'), key: path.join(dir, 'server-key.pem') };
  if (!fs.existsSync(files.cert) || !fs.existsSync(files.key) || !fs.existsSync(files.ca)) {
    fs.mkdirSync(dir, { recursive: true });
    const [caKeys, serverKeys] = await Promise.all([rsaKeys(), rsaKeys()]);
    const forge = forgeLib();
    const ca = makeCa(caKeys);
    const server = makeServerCert(ca, serverKeys);
    fs.writeFileSync(files.caKey, forge.pki.privateKeyToPem(ca.key), { mode: 0o600 });
    fs.writeFileSync(files.key, forge.pki.privateKeyToPem(server.key), { mode: 0o600 });
    fs.writeFileSync(files.cert, forge.pki.certificateToPem(server.cert) + forge.pki.certificateToPem(ca.cert));
    fs.writeFileSync(files.ca, forge.pki.certificateToPem(ca.cert));
  }
  return { cert: fs.readFileSync(files.cert, 'utf8'), key: fs.readFileSync(files.key, 'utf8'), caFile: files.ca };
}
