// A refusal to start (or to run a CLI command) that the operator can fix, said in one line: the
// server prints its message without a stack and exits 1, the CLI prints it after "engagement: ".
export class StartupError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "StartupError";
  }
}
