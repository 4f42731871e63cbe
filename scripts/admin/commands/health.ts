// health: the workers' heartbeats and the job queues, from the database (a worker has no port). Exit 1 when no worker
// process is alive, so that a probe or a script can rely on the exit code.
import type { Command } from 'commander';
import { listProcesses, queueDepths, workerHealth } from '../../../server/platform/jobs/processes.js';
import { withDatabase } from '../database.js';
import { failWithoutError } from '../io.js';
import { printJson, printText, table } from '../output.js';

export function registerHealthCommand(program: Command): void {
  program
    .command('health')
    .description(
      "the service's processes with their heartbeats (alive: one in the last 5 s) and each job queue's depth and oldest waiting job; exit 1 when no worker is alive",
    )
    .option('--json', 'print {"workers", "processes", "queues"}')
    .action(async (options: { json?: boolean }) => {
      const { workers, processes, queues } = await withDatabase(async (db) => ({
        workers: await workerHealth(db),
        processes: await listProcesses(db),
        queues: await queueDepths(db),
      }));
      if (options.json) {
        printJson({
          workers: { alive: workers.alive, lastHeartbeatAt: workers.lastHeartbeatAt?.toISOString() ?? null },
          processes: processes.map((p) => ({
            ...p,
            startedAt: p.startedAt.toISOString(),
            heartbeatAt: p.heartbeatAt.toISOString(),
          })),
          queues,
        });
      } else {
        printText(
          `${workers.alive} worker process${workers.alive === 1 ? '' : 'es'} alive`,
          '',
          ...table(
            ['PROCESS', 'ROLE', 'HOST', 'PID', 'ALIVE', 'LAST HEARTBEAT'],
            processes.map((p) => [
              p.id,
              p.role,
              p.host,
              String(p.pid),
              p.alive ? 'yes' : 'no',
              `${p.silentSeconds.toFixed(1)} s ago`,
            ]),
          ),
          '',
          ...(queues.length === 0
            ? ['no job waiting or running']
            : table(
                ['QUEUE', 'WAITING', 'ACTIVE', 'SCHEDULED', 'OLDEST WAITING'],
                queues.map((q) => [
                  q.queue,
                  String(q.waiting),
                  String(q.active),
                  String(q.scheduled),
                  `${q.oldestWaitingSeconds} s`,
                ]),
              )),
        );
      }
      if (workers.alive === 0) failWithoutError();
    });
}
