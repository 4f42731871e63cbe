// Postgres LISTEN on one channel, over a connection of its own (a pooled connection cannot hold a LISTEN: it goes
// back to the pool). What listens must be able to tell when it might have missed a notification, so the listener
// reports its state: `onListening` once the LISTEN is in place, `onLost` when the connection fails (then it
// reconnects, with a growing pause, until it is closed). Between the two the caller must assume it hears nothing.
import pg from 'pg';
import type { Logger } from 'pino';

export interface ChannelListener {
  /** Stops listening and closes the connection; no handler runs afterwards. */
  close(): Promise<void>;
}

export interface ListenHandlers {
  onNotification(payload: string): void;
  /** The LISTEN is in place: from now on every notification committed arrives. */
  onListening(): void;
  /** The connection failed or ended: notifications may be missed until onListening runs again. */
  onLost(): void;
}

const RETRY_MS = [100, 250, 500, 1_000, 2_000, 5_000];

/**
 * LISTENs on `channel` (a constant identifier of the code, never input) until closed. `url` must reach a session of
 * its own: pass Database.directUrl, never a transaction-mode pooler's (PgBouncer would run the LISTEN on a server
 * connection it then hands to other clients, and this listener would report listening while it hears nothing).
 */
export function listenToChannel(
  url: string,
  channel: string,
  handlers: ListenHandlers,
  logger: Logger,
): ChannelListener {
  if (!/^[a-z_][a-z0-9_]*$/.test(channel)) throw new Error(`listenToChannel: ${channel} is not a plain identifier`);
  let closed = false;
  let client: pg.Client | null = null;
  let attempt = 0;
  let retry: NodeJS.Timeout | null = null;

  const lost = (current: pg.Client) => {
    if (client !== current) return; // already handled
    client = null;
    current.removeAllListeners('notification');
    current.end().catch(() => {});
    handlers.onLost();
    if (closed) return;
    const pause = RETRY_MS[Math.min(attempt, RETRY_MS.length - 1)]!;
    attempt += 1;
    retry = setTimeout(connect, pause);
    retry.unref();
  };

  const connect = () => {
    retry = null;
    if (closed) return;
    const current = new pg.Client({ connectionString: url, application_name: 'erp-api-listener' });
    client = current;
    current.on('error', (error) => {
      logger.warn({ err: error, channel }, 'notification listener lost its connection; reconnecting');
      lost(current);
    });
    current.on('end', () => lost(current));
    current.on('notification', (message) => {
      if (message.channel === channel) handlers.onNotification(message.payload ?? '');
    });
    // LISTEN takes an identifier, which cannot be a bound parameter; the channel is checked above.
    current
      .connect()
      .then(() => current.query(`LISTEN ${channel}`))
      .then(() => {
        if (client !== current) return;
        attempt = 0;
        handlers.onListening();
      })
      .catch((error: unknown) => {
        logger.warn({ err: error, channel }, 'notification listener could not connect; retrying');
        lost(current);
      });
  };

  connect();
  return {
    async close() {
      closed = true;
      if (retry) clearTimeout(retry);
      const current = client;
      client = null;
      if (current) {
        current.removeAllListeners('notification');
        await current.end().catch(() => {});
      }
    },
  };
}
