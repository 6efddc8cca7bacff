// The event log as a test reads it: Prisma's rows of `events` with `payload` the envelope, parsed
// from its text (src/events/stored-envelope.ts), whichever column holds it.
import type { Prisma, PrismaClient } from "../../src/generated/prisma/client.js";
import { envelopeOf } from "../../src/events/stored-envelope.js";

type Row = Awaited<ReturnType<PrismaClient["event"]["findMany"]>>[number];
export type LoggedEvent = Omit<Row, "payload"> & { payload: unknown };

const parsed = (r: Row): LoggedEvent => ({ ...r, payload: envelopeOf(r) });

/** `prisma.event.findMany(args)`, each row's `payload` its envelope. */
export async function loggedEvents(prisma: PrismaClient, args: Prisma.EventFindManyArgs = {}): Promise<LoggedEvent[]> {
  return (await prisma.event.findMany(args)).map(parsed);
}

/** `prisma.event.findFirst(args)`, its `payload` the envelope. */
export async function loggedEvent(prisma: PrismaClient, args: Prisma.EventFindFirstArgs = {}): Promise<LoggedEvent | null> {
  const row = await prisma.event.findFirst(args);
  return row && parsed(row);
}
