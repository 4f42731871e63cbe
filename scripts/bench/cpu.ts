// CPU time actually spent by the processes under test, read from /proc (Linux): user + system time. On a machine
// shared with other work the throughput of a run moves with the neighbours; the CPU a request costs the service's
// process and the database moves much less, so the bench prints both (issue 40). Elsewhere than Linux it reads 0
// and the bench prints no CPU figures.
import { existsSync, readdirSync, readFileSync } from 'node:fs';

/** Clock ticks per second of /proc's times (USER_HZ: 100 on every Linux this runs on). */
const TICK_US = 1_000_000 / 100;

export const cpuReadable = existsSync('/proc/self/stat');

/** utime, stime, cutime, cstime and the parent's pid of a process, or null when it is gone. */
function stat(pid: number): { own: number; children: number; ppid: number } | null {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return null;
  }
  // After the command name in parentheses: state, ppid, ..., utime (14th field) at index 11.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  const n = (i: number) => Number(fields[i]);
  return { own: (n(11) + n(12)) * TICK_US, children: (n(13) + n(14)) * TICK_US, ppid: n(1) };
}

/** CPU µs used so far by these processes themselves (the service's or a baseline's Node processes). */
export function processesCpuUs(pids: readonly number[]): number {
  if (!cpuReadable) return 0;
  return pids.reduce((sum, pid) => sum + (stat(pid)?.own ?? 0), 0);
}

/**
 * CPU µs used so far by a PostgreSQL server: the postmaster, its backends alive now, and those that have exited
 * (reaped by the postmaster, so counted in its children's times). A backend that exits between two readings moves
 * from the one to the other with all its time, so the difference of two readings is the server's CPU between them.
 */
export function postgresCpuUs(postmasterPid: number): number {
  if (!cpuReadable) return 0;
  const postmaster = stat(postmasterPid);
  if (!postmaster) return 0;
  let sum = postmaster.own + postmaster.children;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const child = stat(Number(entry));
    if (child?.ppid === postmasterPid) sum += child.own;
  }
  return sum;
}
