/**
 * Makes (once) the local CA and server certificate the test servers share, in
 * `.stratus-test/tls/`, so that `NODE_EXTRA_CA_CERTS` can name the CA before the test
 * processes start (the official SDK clients only trust certificates through it).
 */
import path from 'node:path';
import { loadTls } from '../src/core/tls.ts';

const dir = path.resolve('.stratus-test');
const tls = await loadTls(dir);
process.stdout.write(`test CA: ${tls.caFile}\n`);
