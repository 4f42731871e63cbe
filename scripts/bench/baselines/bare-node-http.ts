// Baseline: node:http answering the same JSON as GET /health: the ceiling of one Node process.
import { createServer } from 'node:http';

const server = createServer((req, res) => {
  if (req.url !== '/api/v1/health') {
    res.writeHead(404).end();
    return;
  }
  const body = JSON.stringify({
    status: 'ok',
    version: '1.13.0',
    environment: 'sandbox',
    time: new Date().toISOString(),
  });
  res
    .writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) })
    .end(body);
});
server.listen(Number(process.env.PORT), '127.0.0.1', () => console.log('ready'));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
