// A real SMTP server for email tests (smtp-server on loopback; messages read back with mailparser).
// `delayMs` holds each message's answer that long; `refuse` answers RCPT TO for an address with an SMTP code (e.g. 550 for good, 451 for now);
// `port` listens on that port (a server that was down comes back where it was).
import type { AddressInfo } from "node:net";
import { SMTPServer } from "smtp-server";
import { simpleParser, type ParsedMail } from "mailparser";

export interface TestSmtp {
  url: string;
  received: ParsedMail[];
  /** address → the code RCPT TO gets (removed by deleting it) */
  refuse: Map<string, number>;
  /** the user names clients signed in with */
  users: string[];
  /** resolves once `n` messages have arrived */
  waitFor(n: number, timeoutMs?: number): Promise<ParsedMail[]>;
  close(): Promise<void>;
}

export async function startSmtp(opts: { delayMs?: number; port?: number } = {}): Promise<TestSmtp> {
  const received: ParsedMail[] = [];
  const refuse = new Map<string, number>();
  const users: string[] = [];
  const smtp = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS"],
    logger: false,
    // a client that signs in (credentials in its SMTP URL) is let in: the users it used are kept
    allowInsecureAuth: true,
    onAuth(auth, _session, callback) {
      users.push(auth.username ?? "");
      callback(null, { user: auth.username });
    },
    onRcptTo(address, _session, callback) {
      const code = refuse.get(address.address);
      if (code) return callback(Object.assign(new Error(code >= 500 ? "no such mailbox" : "try again later"), { responseCode: code }));
      callback();
    },
    onData(stream, _session, callback) {
      simpleParser(stream).then(
        (mail) => {
          received.push(mail);
          // a slower server: each message takes delayMs after its data
          if (opts.delayMs) setTimeout(callback, opts.delayMs);
          else callback();
        },
        (err: Error) => callback(err),
      );
    },
  });
  // a client killed mid-message (the crash test) resets its connection: that is no test failure
  smtp.on("error", () => undefined);
  await new Promise<void>((resolve) => smtp.listen(opts.port ?? 0, "127.0.0.1", resolve));
  return {
    url: `smtp://127.0.0.1:${(smtp.server.address() as AddressInfo).port}`,
    received,
    refuse,
    users,
    async waitFor(n, timeoutMs = 20_000) {
      const until = Date.now() + timeoutMs;
      while (received.length < n) {
        if (Date.now() > until) throw new Error(`${received.length} of ${n} messages arrived`);
        await new Promise((r) => setTimeout(r, 20));
      }
      return received;
    },
    close: () => new Promise<void>((resolve) => smtp.close(() => resolve())),
  };
}
