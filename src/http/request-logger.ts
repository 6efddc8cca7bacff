// A request's logger (`req.log`): a pino child bound to the request id, made only when something
// logs through it. Fastify makes one per request otherwise, and most requests log nothing through
// it (the access log line is written by observability.ts with the request id in its fields).
import type { FastifyBaseLogger } from "fastify";
import type { Bindings, ChildLoggerOptions, LevelWithSilentOrString } from "pino";

type Log = (...args: unknown[]) => void;

export class LazyRequestLogger {
  private made: FastifyBaseLogger | undefined;

  constructor(
    private readonly parent: FastifyBaseLogger,
    private readonly bindings: Bindings,
    private readonly opts: ChildLoggerOptions,
  ) {}

  private get logger(): FastifyBaseLogger {
    return (this.made ??= this.parent.child(this.bindings, this.opts));
  }

  get level(): LevelWithSilentOrString {
    return this.made ? this.made.level : this.parent.level;
  }

  set level(level: LevelWithSilentOrString) {
    this.logger.level = level;
  }

  fatal(...args: unknown[]): void {
    (this.logger.fatal as Log)(...args);
  }
  error(...args: unknown[]): void {
    (this.logger.error as Log)(...args);
  }
  warn(...args: unknown[]): void {
    (this.logger.warn as Log)(...args);
  }
  info(...args: unknown[]): void {
    (this.logger.info as Log)(...args);
  }
  debug(...args: unknown[]): void {
    (this.logger.debug as Log)(...args);
  }
  trace(...args: unknown[]): void {
    (this.logger.trace as Log)(...args);
  }
  silent(): void {}

  child(bindings: Bindings, opts?: ChildLoggerOptions): FastifyBaseLogger {
    return this.logger.child(bindings, opts);
  }
}

/** Fastify's `childLoggerFactory`: the request's logger, made lazily. */
export function lazyRequestLogger(logger: FastifyBaseLogger, bindings: Bindings, opts: ChildLoggerOptions): FastifyBaseLogger {
  return new LazyRequestLogger(logger, bindings, opts) as unknown as FastifyBaseLogger;
}
