// better-sqlite3 for @atproto/dev-env's PDS (the Bluesky tests' local network, test/support/atproto-network.ts),
// built for the Node that runs the tests. npm installs it unbuilt (its install script is not among the
// scripts npm runs by default), its prebuilt binaries would come from GitHub (out of reach here), and
// node-gyp needs the running Node's headers, which Debian has only for its own Node and nodejs.org
// would serve. The registry's `node-<platform>-<arch>` package of the same version carries them
// (`include/node/`): packed once into node_modules/.cache/node-headers/, they build it in place
// (`npm rebuild better-sqlite3` with npm_config_nodedir; g++, make and python3 must be there).
// Nothing happens when it already loads.
import { execFile } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

const run = promisify(execFile);
const root = fileURLToPath(new URL("../../", import.meta.url));

/**
 * Whether better-sqlite3 opens a database in this Node, asked of a new process: one that tried before
 * the build may keep what it found then.
 */
async function loads(): Promise<boolean> {
  try {
    await run(process.execPath, ["-e", 'new (require("better-sqlite3"))(":memory:").close()'], { cwd: root });
    return true;
  } catch {
    return false;
  }
}

/** Builds better-sqlite3 for this Node when it does not load (about a minute, once per checkout). */
export async function prepareAtprotoNative(): Promise<void> {
  if (await loads()) return;
  const version = process.versions.node;
  const cache = join(root, "node_modules", ".cache", "node-headers", version);
  const headers = join(cache, "package");
  if (!existsSync(join(headers, "include", "node", "node_version.h"))) {
    rmSync(cache, { recursive: true, force: true });
    mkdirSync(cache, { recursive: true });
    const pkg = `node-${process.platform}-${process.arch}@${version}`;
    await run("npm", ["pack", pkg, "--pack-destination", cache, "--silent", "--json=false"], { cwd: cache, maxBuffer: 1 << 24 });
    const tarball = readdirSync(cache).find((f) => f.endsWith(".tgz"));
    if (!tarball) throw new Error(`npm pack ${pkg} left no tarball in ${cache}`);
    await run("tar", ["xzf", tarball, "package/include"], { cwd: cache });
    rmSync(join(cache, tarball));
  }
  await run("npm", ["rebuild", "better-sqlite3", "--foreground-scripts", "--json=false"], {
    cwd: root,
    env: { ...process.env, npm_config_nodedir: headers },
    maxBuffer: 1 << 26,
  });
  if (!(await loads())) throw new Error(`better-sqlite3 was rebuilt against ${headers} and still does not load in Node ${version}`);
}
