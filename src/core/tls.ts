/**
 * HTTPS material: on first start a local certificate authority and a server certificate
 * for `localhost`, `127.0.0.1` and `::1`, made with node-forge and kept in `<data dir>/tls/`
 * (`ca.pem` is the file clients trust through `NODE_EXTRA_CA_CERTS`). A given certificate
 * and key replace them.
 */
import fs from 'node:fs';
import path from 'node:path';
import forge from 'node-forge';

/** PEM strings for the HTTPS listener, and where the CA file is. */
export interface TlsMaterial {
  cert: string;
  key: string;
  /** Path of the CA certificate clients should trust (undefined for a given certificate). */
  caFile?: string;
}

function serial(): string {
  return '01' + forge.util.bytesToHex(forge.random.getBytesSync(15));
}

function makeCa(): { cert: forge.pki.Certificate; key: forge.pki.rsa.PrivateKey } {
  const keys = forge.pki.rsa.generateKeyPair(2048);
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
  cert.sign(keys.privateKey, forge.md.sha256.create());
  return { cert, key: keys.privateKey };
}

function makeServerCert(ca: { cert: forge.pki.Certificate; key: forge.pki.rsa.PrivateKey }): { cert: forge.pki.Certificate; key: forge.pki.rsa.PrivateKey } {
  const keys = forge.pki.rsa.generateKeyPair(2048);
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
  cert.sign(ca.key, forge.md.sha256.create());
  return { cert, key: keys.privateKey };
}

/**
 * Loads or creates the HTTPS material.
 * @throws Error when a given certificate or key file cannot be read.
 */
export function loadTls(dataDir: string, certFile?: string, keyFile?: string): TlsMaterial {
  if (certFile && keyFile) return { cert: fs.readFileSync(certFile, 'utf8'), key: fs.readFileSync(keyFile, 'utf8') };
  const dir = path.join(dataDir, 'tls');
  const files = { ca: path.join(dir, 'ca.pem'), caKey: path.join(dir, 'ca-key.pem'), cert: path.join(dir, 'server.pem'), key: path.join(dir, 'server-key.pem') };
  if (!fs.existsSync(files.cert) || !fs.existsSync(files.key) || !fs.existsSync(files.ca)) {
    fs.mkdirSync(dir, { recursive: true });
    const ca = makeCa();
    const server = makeServerCert(ca);
    fs.writeFileSync(files.caKey, forge.pki.privateKeyToPem(ca.key), { mode: 0o600 });
    fs.writeFileSync(files.key, forge.pki.privateKeyToPem(server.key), { mode: 0o600 });
    fs.writeFileSync(files.cert, forge.pki.certificateToPem(server.cert) + forge.pki.certificateToPem(ca.cert));
    fs.writeFileSync(files.ca, forge.pki.certificateToPem(ca.cert));
  }
  return { cert: fs.readFileSync(files.cert, 'utf8'), key: fs.readFileSync(files.key, 'utf8'), caFile: files.ca };
}
