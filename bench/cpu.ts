/**
 * CPU seconds from /proc, for the benchmarks that say where a method's CPU went: the Temporal
 * server (long-lived processes named `temporal` or `server`), the worker processes, the bench's
 * own process (the in-process worker when there are no worker processes), and the whole
 * machine. PostgreSQL's share is what is left of the machine's: short-lived backends (the bare
 * loop's) exit before they could be read, and the server's background processes count with it.
 */
import { readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';

export interface CpuReading {
  temporal: number;
  workers: number;
  bench: number;
  machine: number;
}

/** CPU seconds a method used, by whom, and how busy it kept the machine's cores. */
export interface CpuUse extends CpuReading {
  postgres: number;
  /** The machine's CPU seconds over wall seconds × cores: 1 is every core busy throughout. */
  busy: number;
}

const HZ = 100;

function ticks(pid: string | number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return Number(fields[11]) + Number(fields[12]); // utime, stime
  } catch {
    return 0; // exited
  }
}

export function cpuNow(workerPids: number[]): CpuReading {
  let temporal = 0;
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      if (['temporal', 'server'].includes(readFileSync(`/proc/${pid}/comm`, 'utf8').trim())) temporal += ticks(pid);
    } catch {
      // gone
    }
  }
  const cpu = readFileSync('/proc/stat', 'utf8').split('\n')[0].split(/\s+/).slice(1, 8).map(Number);
  const machine = cpu[0] + cpu[1] + cpu[2] + cpu[5] + cpu[6]; // user, nice, system, irq, softirq
  return { temporal: temporal / HZ, workers: workerPids.reduce((n, p) => n + ticks(p), 0) / HZ, bench: ticks(process.pid) / HZ, machine: machine / HZ };
}

export function cpuSince(before: CpuReading, workerPids: number[], wallSeconds: number): CpuUse {
  const after = cpuNow(workerPids);
  const used = {
    temporal: after.temporal - before.temporal,
    workers: after.workers - before.workers,
    bench: after.bench - before.bench,
    machine: after.machine - before.machine,
  };
  return { ...used, postgres: used.machine - used.temporal - used.workers - used.bench, busy: used.machine / (wallSeconds * os.cpus().length) };
}
