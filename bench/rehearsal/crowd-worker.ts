/**
 * A load-generator worker process of `npm run rehearsal -- --workers N` (forked by crowd.ts): drives
 * its slice of the crowd, reports progress and new reservations, then its recorder and its own load
 * samples, and exits.
 */
import {
  createDriver,
  PROGRESS_EVERY_MS,
  type CoordinatorMessage,
  type WorkerMessage,
  type WorkerStart,
} from './crowd.js';
import { LoadMonitor } from './monitor.js';
import { Recorder } from './recorder.js';

// The coordinator is gone (killed, crashed): nobody will read our results, so do not drive a crowd on.
process.once('disconnect', () => process.exit(1));

const send = (m: WorkerMessage) => new Promise<void>((resolve) => process.send!(m, () => resolve()));

// A failure ends the worker with its error, as an unhandled rejection would: the coordinator sees the exit.
process.once('message', (start: WorkerStart) => {
  drive(start).catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
});

async function drive({ o, sale, slice }: WorkerStart) {
  const rec = new Recorder(sale.startsAt);
  const monitor = new LoadMonitor(sale.startsAt);
  monitor.start();
  const { driver, close } = createDriver(o, sale, rec, slice);
  process.on('message', (m: WorkerStart | CoordinatorMessage) => {
    if ('type' in m && m.type === 'stop') driver.stop();
  });
  const progress = setInterval(() => {
    void send({
      type: 'progress',
      requests: rec.requests,
      usersArrived: rec.usersArrived,
      lagMs: driver.arrivalLagMs,
      fresh: rec.takeNewReservations(),
    });
  }, PROGRESS_EVERY_MS);
  try {
    await driver.run();
  } finally {
    clearInterval(progress);
    monitor.stop();
    close();
  }
  await send({ type: 'done', rec: rec.toJSON(), maxArrivalLagMs: driver.maxArrivalLagMs, samples: monitor.samples });
  process.exit(0);
}
