// Two byte streams joined both ways, as a proxied connection is: each side's bytes go to the
// other with backpressure (pipe), an end on one side ends the other's writing (half-close kept),
// and an error or a close on either side destroys the other (once one side is gone nothing more
// can cross). Nothing is buffered beyond the streams' own high-water marks.
import type { Duplex } from 'node:stream';

export function joinStreams(a: Duplex, b: Duplex): void {
  a.on('error', () => b.destroy());
  b.on('error', () => a.destroy());
  a.once('close', () => b.destroy());
  b.once('close', () => a.destroy());
  a.pipe(b);
  b.pipe(a);
}
