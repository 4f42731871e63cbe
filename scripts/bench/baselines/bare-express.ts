// Baseline: a bare express 5 route answering the same JSON as GET /health, nothing else in the pipeline.
import express from 'express';

const app = express();
app.get('/api/v1/health', (_req, res) => {
  res.json({ status: 'ok', version: '1.13.0', environment: 'sandbox', time: new Date().toISOString() });
});
const server = app.listen(Number(process.env.PORT), '127.0.0.1', () => console.log('ready'));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
