// The service's logger (pino): JSON lines, every line through the one redaction of secrets.
import { pino, type DestinationStream, type Logger, type LoggerOptions } from "pino";
import { redactSecrets } from "./log-redaction.js";

/**
 * The service's logger: JSON lines at LOG_LEVEL to `destination` (standard output by default), every
 * finished line passed through the one redaction of secrets (src/lib/log-redaction.ts).
 */
export function createLogger(config: { LOG_LEVEL: LoggerOptions["level"] }, destination?: DestinationStream): Logger {
  const options: LoggerOptions = {
    level: config.LOG_LEVEL,
    hooks: { streamWrite: redactSecrets },
    redact: {
      paths: [
        "req.headers.authorization",
        'req.headers["x-api-key"]',
        'req.headers["x-service-identity"]',
        "secret",
        "*.secret",
        "key",
        "*.key",
      ],
      censor: "[redacted]",
    },
  };
  return destination ? pino(options, destination) : pino(options);
}
