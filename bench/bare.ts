/**
 * The framework floor of the benchmarks (`bench/harness.ts`): a bare Fastify endpoint returning
 * a small JSON document, in its own process. `GET /bare` is the floor of `bench/run.ts`; every
 * other path and method answers the same document (JSON bodies parsed), the floor of the request
 * pools of `bench/real.ts`. Prints `listening <port>` on stdout once it listens.
 */
import Fastify from 'fastify';

const app = Fastify({ logger: false });
app.get('/bare', async () => ({ status: 'ok' }));
app.all('/*', async () => ({ status: 'ok' }));
const url = await app.listen({ port: 0, host: '127.0.0.1' });
process.stdout.write(`listening ${new URL(url).port}\n`);
process.on('SIGTERM', () => void app.close().then(() => process.exit(0)));
