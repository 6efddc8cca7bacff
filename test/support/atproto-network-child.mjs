// A local AT Protocol network for the Bluesky tests (test/support/atproto-network.ts), in a process of
// its own: @atproto/dev-env's TestNetwork (a PLC directory, a PDS, an AppView and what they need) on
// loopback, on the database of DB_POSTGRES_URL in schemas named after DB_POSTGRES_SCHEMA, and on the
// Redis of REDIS_HOST. It prints `ready <JSON of its addresses>`, then serves on the control address:
//   POST /process-all → 204 once the AppView has indexed everything written so far.
// It stops on SIGTERM.
import { createServer } from "node:http";
import process from "node:process";
import { TestNetwork } from "@atproto/dev-env";

const network = await TestNetwork.create({
  dbPostgresUrl: process.env.DB_POSTGRES_URL,
  dbPostgresSchema: process.env.DB_POSTGRES_SCHEMA,
});
const control = createServer((req, res) => {
  if (req.method === "POST" && req.url === "/process-all") {
    network.processAll().then(
      () => res.writeHead(204).end(),
      (err) => res.writeHead(500).end(String(err)),
    );
    return;
  }
  res.writeHead(404).end();
});
await new Promise((resolve) => control.listen(0, "127.0.0.1", resolve));
const addresses = {
  pds: network.pds.url,
  appView: network.bsky.url,
  plc: network.plc.url,
  control: `http://127.0.0.1:${control.address().port}`,
};
process.stdout.write(`ready ${JSON.stringify(addresses)}\n`);
process.on("SIGTERM", () => {
  control.close();
  network.close().then(
    () => process.exit(0),
    () => process.exit(1),
  );
});
