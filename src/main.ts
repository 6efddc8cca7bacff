// Process entry: config → app → listen (and, embedded, the CLI's control socket); SIGTERM/SIGINT drain and stop.
import { buildApp } from "./app.js";
import { ConfigError, loadConfig } from "./config.js";
import { DataDirInUseError } from "./db/data-dir-lock.js";
import { StartupError } from "./lib/startup-error.js";
import { startControlServer, type ControlServer } from "./cli/control-server.js";
import { entryPoints } from "./http/index-route.js";

async function main() {
  const config = loadConfig();
  const app = await buildApp(config);
  const url = await app.start();
  const log = app.runtime.services.log;
  // where a newcomer goes next, as GET / says it (src/http/index-route.ts)
  const links = entryPoints(config, config.PUBLIC_URL ?? url);
  log.info(
    { url, mode: config.embedded ? `embedded (${config.DATA_DIR})` : "postgresql", links },
    `engagement service listening on ${url} — console ${links.console}, OpenAPI ${links.openapi}` +
      (links.graphiql ? `, GraphiQL ${links.graphiql}` : `, GraphQL ${links.graphql}`),
  );
  // embedded: this process holds DATA_DIR, so the CLI sends its commands here (src/cli/control-server.ts)
  let control: ControlServer | undefined;
  if (config.embedded) {
    const services = app.runtime.services;
    control = await startControlServer({ dataDir: config.DATA_DIR, services, baseUrl: config.PUBLIC_URL ?? url, log }).catch(
      (err: unknown) => {
        log.warn({ err }, "no control socket: the CLI cannot run commands while this server holds DATA_DIR");
        return undefined;
      },
    );
  }
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, "shutting down");
    const force = setTimeout(() => process.exit(1), 15_000);
    force.unref();
    await control?.close();
    await app.stop();
    process.exit(0);
  };
  process.on("SIGTERM", () => void stop("SIGTERM"));
  process.on("SIGINT", () => void stop("SIGINT"));
}

main().catch((err: unknown) => {
  // what the operator can fix is said in its own words (one line for most), without a stack trace
  if (err instanceof ConfigError || err instanceof DataDirInUseError || err instanceof StartupError) {
    console.error(err.message);
  } else {
    console.error(err);
  }
  process.exit(1);
});
