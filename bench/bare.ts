/**
 * The framework floor for `bench/run.ts`: a bare Fastify endpoint returning a small JSON
 * document, in its own process. Prints `listening <port>` on stdout once it listens.
 */
import Fastify from 'fastify';

const app = Fastify({ logger: false });
app.get('/bare', async () => ({ status: 'ok' }));
const url = await app.listen({ port: 0, host: '127.0.0.1' });
process.stdout.write(`listening ${new URL(url).port}\n`);
process.on('SIGTERM', () => void app.close().then(() => process.exit(0)));
