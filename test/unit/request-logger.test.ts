// The request logger fastify hands each request (req.log): a pino child bound to the request id,
// made only when something logs through it.
import { Writable } from "node:stream";
import { pino } from "pino";
import { describe, expect, it, vi } from "vitest";
import { lazyRequestLogger } from "../../src/http/request-logger.js";

function logger(level: string) {
  const raw: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      raw.push(...chunk.toString().split("\n").filter(Boolean));
      done();
    },
  });
  return { parent: pino({ level }, sink), raw };
}

describe("lazyRequestLogger", () => {
  it("makes the child on the first line it logs, once, and every line carries the bindings once", async () => {
    const { parent, raw } = logger("info");
    const child = vi.spyOn(parent, "child");
    const log = lazyRequestLogger(parent, { reqId: "r-1" }, {});
    expect(child).not.toHaveBeenCalled();
    expect(log.level).toBe("info");
    log.debug("below the level");
    log.info({ route: "/x" }, "first");
    log.error(new Error("boom"), "second");
    await vi.waitFor(() => expect(raw).toHaveLength(2));
    expect(child).toHaveBeenCalledTimes(1);
    for (const line of raw) expect(line.match(/"reqId"/g)).toHaveLength(1);
    expect(raw.map((l) => JSON.parse(l) as { reqId: string; msg: string; level: number })).toMatchObject([
      { reqId: "r-1", msg: "first", level: 30, route: "/x" },
      { reqId: "r-1", msg: "second", level: 50, err: { message: "boom" } },
    ]);
  });

  it("never makes a child for a request that logs nothing, and follows its own level once set", async () => {
    const { parent, raw } = logger("warn");
    const child = vi.spyOn(parent, "child");
    lazyRequestLogger(parent, { reqId: "r-2" }, {});
    expect(child).not.toHaveBeenCalled();
    const log = lazyRequestLogger(parent, { reqId: "r-3" }, {});
    log.level = "debug";
    log.debug("now visible");
    await vi.waitFor(() => expect(raw).toHaveLength(1));
    expect(JSON.parse(raw[0]!)).toMatchObject({ reqId: "r-3", msg: "now visible" });
    expect(parent.level).toBe("warn");
  });
});
